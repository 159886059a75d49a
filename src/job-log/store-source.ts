// A job's log as the shared store holds it (state/log-shipper.ts sends it
// there): for a job of another machine, whose events.jsonl and transcripts
// are not in this machine's state dir. The lines are what the files hold, so
// they go through the same readers and renderers (log-lines.ts,
// event-text.ts, transcript-text.ts), which redact and escape them alike:
// a line from the store is no more trusted than one from a file.
import { existsSync, readFileSync } from 'node:fs';
import { hostName } from '../proc/host.js';
import type { ZodType } from 'zod';
import type { JobEvent } from '../model/event.js';
import type { Job } from '../model/job.js';
import type { AsyncJobLogStore, AsyncStateStore } from '../state/async-api.js';
import { parseEvents } from '../state/events.js';
import { parseJsonLines, type JsonLine, type Skipped } from '../state/jsonl.js';
import { EVENTS_STREAM } from '../state/log-shipper.js';
import { eventsFile } from '../state/paths.js';

/** Lines read from the store per query. */
const PAGE = 5000;

/** A job's log lines from the store, by stream, and the last seq read. */
export class StoredJobLog {
  events: string[] = [];
  readonly transcripts = new Map<string, string[]>();
  seq = 0;
  /** Whether a read came back: until then the log here is not what the store had (a pane waits, not drawn empty). */
  readOnce = false;

  constructor(readonly jobId: string) {}

  /** Reads what was appended after the last seq read; the lines that came, in order. */
  async readMore(logs: AsyncJobLogStore): Promise<{ stream: string; line: string }[]> {
    const got: { stream: string; line: string }[] = [];
    for (;;) {
      const page = await logs.read(this.jobId, { after: this.seq, limit: PAGE });
      for (const l of page) {
        if (l.stream === EVENTS_STREAM) this.events.push(l.line);
        else if (l.stream.startsWith('transcript:')) {
          const id = l.stream.slice('transcript:'.length);
          let t = this.transcripts.get(id);
          if (!t) this.transcripts.set(id, (t = []));
          t.push(l.line);
        } else continue; // a stream this build does not know
        got.push({ stream: l.stream, line: l.line });
      }
      if (page.length) this.seq = page.at(-1)!.seq;
      if (page.length < PAGE) {
        this.readOnce = true;
        return got;
      }
    }
  }

  /** The job's events, and the lines that are not events (numbered as they came). */
  parsedEvents(): { events: JobEvent[]; skipped: Skipped[] } {
    const r = parseEvents(this.events.join('\n'));
    return { events: r.values, skipped: r.skipped };
  }

  /** An agent session's transcript lines, parsed; null when the store has none. */
  transcript(agentSessionId: string): JsonLine<unknown>[] | null {
    const t = this.transcripts.get(agentSessionId);
    return t ? parseJsonLines(t.join('\n')) : null;
  }

  /** An agent session's transcript entries (what is not JSON skipped), for transcriptText; null when the store has none. */
  transcriptValues(agentSessionId: string): unknown[] | null {
    const t = this.transcript(agentSessionId);
    return t ? t.flatMap((l) => (l.ok ? [l.value] : [])) : null;
  }
}

/**
 * Whether the store's copy of a job's events is its whole event log and the
 * file here is not: there is no file, the job ran on another host (a
 * landing, an abandon or a cleanup here wrote a few lines of its end), or the
 * store holds more events than the file (those lines were written on another
 * machine). With a shared store its copy is the record; the file here is
 * read when it is the whole of it, as it is where the job ran.
 */
export function storedEventsAreTheRecord(
  stateDir: string,
  job: Job,
  stored: StoredJobLog | null | undefined,
  thisHost = hostName(),
): stored is StoredJobLog {
  if (!stored) return false;
  const file = eventsFile(stateDir, job.id);
  if (!existsSync(file)) return true;
  if (job.host !== null && job.host !== thisHost) return true;
  let lines: number;
  try {
    lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '').length;
  } catch {
    return true;
  }
  return stored.events.length > lines;
}

/** Whether some of the job's log is not in this state dir (its events file, or an agent's transcript). */
/**
 * Whether a job's whole log is read from the shared store: it ran on another
 * machine, or its files are not in this state dir. A job of this machine is
 * read from its files, as on SQLite (its runner writes them first).
 */
export function logIsElsewhere(
  stateDir: string,
  job: Pick<Job, 'id' | 'host' | 'agent_sessions'>,
  thisHost = hostName(),
): boolean {
  return (job.host !== null && job.host !== thisHost) || logFilesMissing(stateDir, job);
}

export function logFilesMissing(stateDir: string, job: Pick<Job, 'id' | 'agent_sessions'>): boolean {
  if (!existsSync(eventsFile(stateDir, job.id))) return true;
  return job.agent_sessions.some(
    (a) => !existsSync(a.transcript.startsWith('/') ? a.transcript : `${stateDir}/${a.transcript}`),
  );
}

/** The job's events in the store (only: its transcripts are read from the files here). */
export async function readStoredEvents(logs: AsyncJobLogStore, jobId: string): Promise<StoredJobLog> {
  const log = new StoredJobLog(jobId);
  for (let after = 0; ;) {
    const page = await logs.read(jobId, { after, stream: EVENTS_STREAM, limit: PAGE });
    for (const l of page) log.events.push(l.line);
    if (page.length) after = page.at(-1)!.seq;
    if (page.length < PAGE) return log;
  }
}

/** The whole of a job's log in the store. */
export async function readStoredLog(logs: AsyncJobLogStore, jobId: string): Promise<StoredJobLog> {
  const log = new StoredJobLog(jobId);
  await log.readMore(logs);
  return log;
}

/**
 * Follows a job's log in the store: `onLines` gets what was appended since
 * the last read, each time the store tells of an append to the job (its
 * watch: LISTEN/NOTIFY, no polling) and after a lost connection comes back.
 * Resolves to the function that stops it.
 */
export async function followStoredLog(
  store: AsyncStateStore,
  log: StoredJobLog,
  onLines: (lines: { stream: string; line: string }[]) => void,
): Promise<() => Promise<void>> {
  if (!store.watchLogs) throw new Error('this store cannot be followed (it has no watch)');
  let reading: Promise<void> = Promise.resolve();
  let behind = false;
  const readSoon = () => {
    // Notices that come during a read make one more read after it, not one each.
    if (behind) return;
    behind = true;
    reading = reading.then(async () => {
      behind = false;
      try {
        const got = await log.readMore(store.logs);
        if (got.length) onLines(got);
      } catch {
        // A lost connection: the watch says when it is back, and the read is made then.
      }
    });
  };
  const stop = await store.watchLogs((jobId, seq) => {
    if (jobId === null || (jobId === log.jobId && seq > log.seq)) readSoon();
  });
  // What came between the caller's read and the watch's start.
  readSoon();
  return async () => {
    await stop();
    await reading;
  };
}

/**
 * One stream of a job's log in the store as a live view reads a file's tail
 * (state/jsonl.ts JsonLinesTail): each read() gives the lines that came
 * since the last, parsed (a line that is not JSON, or not what `schema`
 * says, is reported skipped, never trusted). The log is kept up to date by
 * followStoredLog; a dashboard swaps this for the file's tail when a job's
 * files are not on its machine.
 */
export class StoredStreamTail<T = unknown> {
  private next = 0;
  /** As JsonLinesTail's: a store's log never shrinks, so it stays 0. */
  readonly breaks = 0;

  constructor(
    private readonly log: StoredJobLog,
    /** `events`, or an agent session's id for its transcript. */
    private readonly which: { events: true } | { transcript: string },
    private readonly schema?: ZodType<T>,
  ) {}

  read(): JsonLine<T>[] {
    const lines =
      'events' in this.which ? this.log.events : (this.log.transcripts.get(this.which.transcript) ?? []);
    if (this.next >= lines.length) return [];
    const fresh = lines.slice(this.next);
    const first = this.next + 1;
    this.next = lines.length;
    return parseJsonLines(fresh.join('\n'), this.schema, first);
  }
}
