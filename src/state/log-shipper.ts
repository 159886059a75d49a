// Sends a job's event log and agent transcripts to the shared store
// (api.ts JobLogStore) as they are written to the local files, so another
// machine's dashboard and `ii job logs` read them. The files stay the record
// on this machine; the store gets the same lines:
// - in batches: a round trip to a remote server is 5–15 ms, and an agent
//   streams hundreds of lines a second. Lines wait at most `flushMs`, or
//   until `batchLines` are waiting, and a stage's end or the job's end
//   (the stage and finished events) sends them at once;
// - in order: one batch in flight at a time, so a job's numbers follow what
//   was written;
// - never lost to a dropped server: a batch that fails stays at the head of
//   the queue and is sent again (every 0.25 s, doubling to 10 s), with one
//   clear warning when it starts failing and one when it gets through. Only
//   past `maxBufferedBytes` waiting (a flood while the server is away) are
//   the oldest lines dropped, counted in a marker line: they are in the files.
// - never stored twice: an append whose reply was lost may have committed,
//   and the store numbers lines itself, so a resend would not be caught
//   there. Before a failed batch is sent again, the store's lines of its
//   stream after this writer's last known seq are read, and the batch is
//   not sent when they hold it as one run of consecutive seqs: one append
//   is one statement whose lines take consecutive numbers (pg/logs.ts), so
//   another appender of the job (a landing on another machine) cannot have
//   made that run unless it wrote the very same lines, which an event's
//   timestamp and a transcript's single writer rule out.
// A transcript's turn is capped in the store as in its file: the first half
// of the cap is sent as it comes, then only the turn's newest quarter is
// kept and sent at the turn's end, after a marker saying what was left out.

import { grouped } from '../text/grouped.js';

export interface LogAppender {
  append(jobId: string, stream: string, lines: readonly string[]): Promise<number>;
  /** The store's lines (JobLogStore.read): without it a failed batch is sent again unchecked. */
  read?(jobId: string, o: { after: number; stream: string; limit: number }): Promise<StoredLine[]>;
}

interface StoredLine {
  seq: number;
  line: string;
}

/** What a transcript recorder tells the store about one agent session's transcript. */
export interface TranscriptSink {
  /** Lines just appended to the file. */
  lines(lines: readonly string[]): void;
  /** A new prompt turn (the cap counts from here): the last one's held end is sent first. */
  beginTurn(): void;
  /** The session closed: its held end is sent. */
  end(): void;
}

export const EVENTS_STREAM = 'events';
/** The store stream of an agent session's transcript. */
export const transcriptStream = (agentSessionId: string): string => `transcript:${agentSessionId}`;

export interface LogShipperOptions {
  store: LogAppender;
  /** Told once when sending starts failing, and once when it gets through again. */
  warn: (message: string) => void;
  /** Most time a line waits before it is sent (ms). */
  flushMs?: number;
  /** Lines waiting that send a batch at once. */
  batchLines?: number;
  /** Most bytes kept waiting while the store cannot be reached. */
  maxBufferedBytes?: number;
  /** First wait before a failed batch is sent again (ms); it doubles up to 10 s. */
  retryMs?: number;
}

interface Pending {
  jobId: string;
  stream: string;
  lines: string[];
  /** Its append failed: it may have been stored all the same (the reply lost), so the store is asked first. */
  uncertain?: boolean;
}

/** Figures of what was sent: batches, lines, and the time the store took. */
export interface ShipStats {
  batches: number;
  lines: number;
  ms: number;
  failures: number;
}

const MB = 2 ** 20;
/** Most lines one append takes (a 1,000-line batch of transcript lines took 70–90 ms on a loaded machine). */
const MAX_SEND = 2000;

export class LogShipper {
  private queue: Pending[] = [];
  private waitingLines = 0;
  private waitingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  /** The error of the last failed send, while sends fail. */
  private failing: string | null = null;
  private retryWait: number;
  private dropped = new Map<string, number>();
  /** Each job's last seq this writer was given: its next batch, if stored, lies after it. */
  private lastSeq = new Map<string, number>();
  private closed = false;
  readonly stats: ShipStats = { batches: 0, lines: 0, ms: 0, failures: 0 };
  private readonly flushMs: number;
  private readonly batchLines: number;
  private readonly maxBytes: number;

  constructor(private readonly o: LogShipperOptions) {
    this.flushMs = o.flushMs ?? 200;
    this.batchLines = o.batchLines ?? 1000;
    this.maxBytes = o.maxBufferedBytes ?? 64 * MB;
    this.retryWait = o.retryMs ?? 250;
  }

  /** Queues lines of a job's stream; `now` sends what is waiting at once (a stage's or the job's end). */
  add(jobId: string, stream: string, lines: readonly string[], now = false): void {
    if (this.closed || lines.length === 0) return;
    const last = this.queue.at(-1);
    // Not onto a batch that may be stored already: the store is searched for it as it was sent.
    if (last && last.jobId === jobId && last.stream === stream && !last.uncertain) last.lines.push(...lines);
    else this.queue.push({ jobId, stream, lines: [...lines] });
    this.waitingLines += lines.length;
    for (const l of lines) this.waitingBytes += l.length;
    if (this.waitingBytes > this.maxBytes) this.dropOldest();
    if (now || this.waitingLines >= this.batchLines) void this.flush();
    else this.schedule(this.flushMs);
  }

  /** A line of the job's event log. */
  event(jobId: string, line: string, now = false): void {
    this.add(jobId, EVENTS_STREAM, [line], now);
  }

  /** The sink for one agent session's transcript, capped per turn at `maxTurnBytes` as the file is. */
  transcript(jobId: string, agentSessionId: string, maxTurnBytes: number): TranscriptSink {
    return new CappedTranscript(this, jobId, transcriptStream(agentSessionId), maxTurnBytes);
  }

  /** Sends everything waiting now; resolves once it is sent or has failed (then it is sent again later). */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    // One send at a time: a flush asked for during one follows it.
    const run = (this.sending ?? Promise.resolve()).then(() => this.sendAll());
    this.sending = run.finally(() => {
      if (this.sending === run) this.sending = null;
    });
    return run;
  }

  /** How many lines wait to be sent. */
  get waiting(): number {
    return this.waitingLines;
  }

  /**
   * Sends what is left, trying again until `deadlineMs` has passed, and
   * stops: the number of lines that could not be sent (0: all were), told
   * in a warning that says where they are kept.
   */
  async close(deadlineMs = 10_000): Promise<number> {
    this.closed = true;
    const until = Date.now() + deadlineMs;
    for (;;) {
      await this.flush();
      if (this.waitingLines === 0 || Date.now() >= until) break;
      await new Promise((r) => setTimeout(r, Math.min(this.retryWait, Math.max(0, until - Date.now()))));
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const left = this.waitingLines;
    if (left > 0) {
      const jobs = [...new Set(this.queue.map((p) => p.jobId))].join(', ');
      this.o.warn(
        `${left} line${left === 1 ? '' : 's'} of job ${jobs}'s log could not be sent to the shared store (${this.failing ?? 'no answer'}): they are in this machine's state dir only (ii job logs here shows them)`,
      );
    }
    return left;
  }

  private schedule(ms: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, ms);
    this.timer.unref?.();
  }

  private async sendAll(): Promise<void> {
    while (this.queue.length > 0) {
      // Taken off the queue while in flight: lines added meanwhile go behind it, and a flood drops none of it.
      // At most MAX_SEND lines a statement: what piled up while the store was away goes in several.
      const head = this.queue[0]!;
      let p: Pending;
      if (head.lines.length > MAX_SEND) {
        p = { ...head, lines: head.lines.slice(0, MAX_SEND) };
        this.queue[0] = { ...head, lines: head.lines.slice(MAX_SEND) };
      } else p = this.queue.shift()!;
      const markers = this.dropped.get(p.jobId);
      const at = performance.now();
      try {
        if (markers) {
          await this.o.store.append(p.jobId, EVENTS_STREAM, [droppedMarker(markers)]);
          this.dropped.delete(p.jobId);
        }
        if (!(p.uncertain && (await this.stored(p)))) {
          const seq = await this.o.store.append(p.jobId, p.stream, p.lines);
          if (seq > (this.lastSeq.get(p.jobId) ?? 0)) this.lastSeq.set(p.jobId, seq);
        }
      } catch (err) {
        // Back at the head, whole (the rest of a split entry after it).
        p.uncertain = true;
        this.queue.unshift(p);
        this.stats.failures++;
        const why = (err as Error).message?.split('\n')[0] ?? String(err);
        if (this.failing === null)
          this.o.warn(
            `the shared store could not take job ${p.jobId}'s log lines (${why}); they are kept and sent again (the local files have them all)`,
          );
        this.failing = why;
        if (!this.closed) {
          this.schedule(this.retryWait);
          this.retryWait = Math.min(this.retryWait * 2, 10_000);
        }
        return;
      }
      this.stats.batches++;
      this.stats.lines += p.lines.length;
      this.stats.ms += performance.now() - at;
      this.waitingLines -= p.lines.length;
      for (const l of p.lines) this.waitingBytes -= l.length;
      if (this.failing !== null) {
        this.o.warn(`the shared store takes job ${p.jobId}'s log lines again; what was kept has been sent`);
        this.failing = null;
      }
      this.retryWait = this.o.retryMs ?? 250;
    }
  }

  /** Whether the store holds `p`'s lines already, as one run of consecutive seqs after this writer's last (see the top). */
  private async stored(p: Pending): Promise<boolean> {
    const read = this.o.store.read;
    if (!read) return false;
    const rows: StoredLine[] = [];
    for (let after = this.lastSeq.get(p.jobId) ?? 0; ;) {
      const page = await read.call(this.o.store, p.jobId, { after, stream: p.stream, limit: 5000 });
      rows.push(...page);
      if (page.length < 5000) break;
      after = page.at(-1)!.seq;
    }
    for (let i = 0; i + p.lines.length <= rows.length; i++)
      if (runAt(rows, i, p.lines)) {
        const seq = rows[i + p.lines.length - 1]!.seq;
        if (seq > (this.lastSeq.get(p.jobId) ?? 0)) this.lastSeq.set(p.jobId, seq);
        return true;
      }
    return false;
  }

  /** Drops the oldest waiting lines (not the batch in flight) until what waits fits again. */
  private dropOldest(): void {
    while (this.waitingBytes > this.maxBytes && this.queue.length > 0) {
      const p = this.queue[0]!;
      const line = p.lines.shift()!;
      if (p.lines.length === 0) this.queue.shift();
      this.waitingLines--;
      this.waitingBytes -= line.length;
      this.dropped.set(p.jobId, (this.dropped.get(p.jobId) ?? 0) + 1);
    }
  }
}

/** Whether `rows` from `at` are `lines`, in one run of consecutive seqs. */
function runAt(rows: readonly StoredLine[], at: number, lines: readonly string[]): boolean {
  for (let i = 0; i < lines.length; i++) {
    const r = rows[at + i]!;
    if (r.line !== lines[i] || r.seq !== rows[at]!.seq + i) return false;
  }
  return true;
}

/** The warning event put in the store where lines were dropped while it could not be reached. */
function droppedMarker(n: number): string {
  return JSON.stringify({
    ts: new Date().toISOString(),
    type: 'warning',
    message: `${n} line${n === 1 ? '' : 's'} of this job's log could not be kept for the shared store while it could not be reached: the runner's machine has them in its state dir`,
  });
}

/** One agent session's transcript into the store, each turn capped as the file's is (see the top). */
class CappedTranscript implements TranscriptSink {
  private headBytes = 0;
  private held: string[] = [];
  private heldBytes = 0;
  private droppedLines = 0;
  private droppedBytes = 0;

  constructor(
    private readonly shipper: LogShipper,
    private readonly jobId: string,
    private readonly stream: string,
    private readonly maxTurnBytes: number,
  ) {}

  lines(lines: readonly string[]): void {
    const headMax = Math.floor(this.maxTurnBytes / 2);
    let i = 0;
    while (i < lines.length && this.headBytes + lines[i]!.length + 1 <= headMax && this.held.length === 0)
      this.headBytes += lines[i++]!.length + 1;
    if (i > 0) this.shipper.add(this.jobId, this.stream, lines.slice(0, i));
    if (i === lines.length) return;
    // Past the head: only the newest quarter of the cap is held, for the turn's end.
    const tailMax = Math.floor(this.maxTurnBytes / 4);
    for (; i < lines.length; i++) {
      this.held.push(lines[i]!);
      this.heldBytes += lines[i]!.length + 1;
    }
    let cut = 0;
    while (this.heldBytes > tailMax && cut < this.held.length) {
      this.heldBytes -= this.held[cut]!.length + 1;
      this.droppedBytes += this.held[cut]!.length + 1;
      cut++;
    }
    if (cut > 0) {
      this.held.splice(0, cut);
      this.droppedLines += cut;
    }
  }

  beginTurn(): void {
    this.end();
    this.headBytes = 0;
  }

  end(): void {
    const out: string[] = [];
    if (this.droppedLines > 0)
      out.push(
        JSON.stringify({
          t: Date.now(),
          type: 'warning',
          message: `${grouped(this.droppedLines)} message${this.droppedLines === 1 ? '' : 's'} (${(this.droppedBytes / MB).toFixed(1)} MB) of this turn were not sent to the shared store: its transcript passed [agent] transcript-max-mb, so its first half and its last part are kept (the runner's machine has its own copy)`,
          dropped: { messages: this.droppedLines, bytes: this.droppedBytes },
        }),
      );
    out.push(...this.held);
    this.held = [];
    this.heldBytes = 0;
    this.droppedLines = 0;
    this.droppedBytes = 0;
    if (out.length) this.shipper.add(this.jobId, this.stream, out, true);
  }
}
