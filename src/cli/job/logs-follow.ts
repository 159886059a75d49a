// ii job logs --follow: after the whole log, a running job's new lines as
// they come, until it ends (its finished event) or Ctrl-C. A job whose files
// are here is followed in its files (each read takes only what was appended);
// one of another machine in the shared store, whose watch (LISTEN/NOTIFY)
// says when its lines come: nothing is polled there.
import { JobEvent } from '../../model/event.js';
import type { Job } from '../../model/job.js';
import { LogFollower } from '../../job-log/follow.js';
import { followStoredLog, type StoredJobLog } from '../../job-log/store-source.js';
import { tailEvents } from '../../state/events.js';
import { JsonLinesTail } from '../../state/jsonl.js';
import { EVENTS_STREAM } from '../../state/log-shipper.js';
import { openAsyncStateStore } from '../../state/open-async.js';
import { transcriptFile } from '../../state/paths.js';

/** How often a followed job's files are read for what was appended (ms). */
const FILE_READ_MS = 250;

export type Write = (lines: string[]) => void;

/** Resolves when the follow ends: the job finished, or `stop` aborted. */
export async function followStore(
  stateDir: string,
  stored: StoredJobLog,
  printed: { id: string; entries: unknown[] }[],
  write: Write,
  stop: AbortSignal,
): Promise<void> {
  const follower = new LogFollower(printed);
  if (stored.parsedEvents().events.some((e) => e.type === 'finished')) return;
  const store = await openAsyncStateStore({ dir: stateDir });
  try {
    await new Promise<void>((resolve) => {
      stop.addEventListener('abort', () => resolve(), { once: true });
      let end: (() => Promise<void>) | null = null;
      void followStoredLog(store, stored, (got) => {
        const out: string[] = [];
        for (const { stream, line } of got) {
          let v: unknown;
          try {
            v = JSON.parse(line);
          } catch {
            continue; // torn or garbled: not trusted, as in a file
          }
          if (stream === EVENTS_STREAM) {
            const e = JobEvent.safeParse(v);
            if (e.success) out.push(...follower.event(e.data));
          } else out.push(...follower.transcript(stream.slice('transcript:'.length), [v]));
        }
        if (follower.finished) out.push(...follower.rest());
        if (out.length) write(out);
        if (follower.finished) resolve();
      }).then(
        (stopWatch) => {
          end = stopWatch;
          if (stop.aborted || follower.finished) void end();
        },
        () => resolve(),
      );
      stop.addEventListener('abort', () => void end?.(), { once: true });
    });
  } finally {
    await store.close();
  }
}

/**
 * Follows a job whose files are here. The tails are made and read to the
 * end before the whole log is printed (`printAll`), so a line written in
 * between may show twice but none is missed.
 */
export async function followFiles(
  job: Job,
  stateDir: string,
  printAll: () => void,
  write: Write,
  stop: AbortSignal,
): Promise<void> {
  const events = tailEvents(stateDir, job.id);
  events.read();
  const transcripts = new Map<string, JsonLinesTail>();
  const tailOf = (id: string) => {
    let t = transcripts.get(id);
    if (!t) transcripts.set(id, (t = new JsonLinesTail(transcriptFile(stateDir, job.id, id))));
    return t;
  };
  const last = job.agent_sessions.at(-1);
  const lastEntries = last ? values(tailOf(last.id)) : [];
  printAll();
  const follower = new LogFollower(printedSessions(job, lastEntries));
  let current = last?.id ?? null;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const out: string[] = [];
      const flush = () => {
        if (current) out.push(...follower.transcript(current, values(tailOf(current))));
      };
      // The events first, then the transcript before each: what the agent
      // wrote before an event is then in the file when it is read, and is
      // printed before the event (its turn's end before the job's; read the
      // other way round, both came in one read and the job's end went first).
      for (const l of events.read()) {
        if (!l.ok) continue;
        // Before an agent's start: the last one's end, then the new one's section.
        flush();
        if (l.value.type === 'agent_start') current = l.value.agent_session_id;
        out.push(...follower.event(l.value));
      }
      flush();
      if (follower.finished) out.push(...follower.rest());
      if (out.length) write(out);
      if (follower.finished) done();
    }, FILE_READ_MS);
    const done = () => {
      clearInterval(timer);
      resolve();
    };
    stop.addEventListener('abort', done, { once: true });
  });
}

/** The job's agent sessions as the whole log printed them: only the last one's entries matter (only it goes on). */
export const printedSessions = (job: Job, lastEntries: unknown[]): { id: string; entries: unknown[] }[] =>
  job.agent_sessions.map((a, i) => ({
    id: a.id,
    entries: i === job.agent_sessions.length - 1 ? lastEntries : [],
  }));

const values = (t: JsonLinesTail): unknown[] => t.read().flatMap((l) => (l.ok ? [l.value] : []));
