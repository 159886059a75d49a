// The shared store's copies of the logs of jobs the board shows whose files
// are not on this machine (io/sync.ts): one LISTEN for all of them (a
// followStoredLog per job would hold a connection each), each job's appended
// lines read one read at a time, notices during a read making one more.
import { StoredJobLog } from '../../job-log/store-source.js';
import type { AsyncStateStore } from '../../state/async-api.js';

interface Followed {
  log: StoredJobLog;
  reading: Promise<void>;
  behind: boolean;
}

export class StoredLogs {
  private readonly held = new Map<string, Followed>();
  private stop: Promise<(() => Promise<void>) | null> | null = null;
  private closed = false;

  constructor(
    private readonly store: AsyncStateStore,
    /** A job's log got lines (read them from its StoredJobLog). */
    private readonly onLines: (jobId: string) => void,
  ) {}

  /** The job's log as the store holds it, followed from now on (its lines come in as they are read). */
  get(jobId: string): StoredJobLog {
    let f = this.held.get(jobId);
    if (f) return f.log;
    f = { log: new StoredJobLog(jobId), reading: Promise.resolve(), behind: false };
    this.held.set(jobId, f);
    if (!this.stop && this.store.watchLogs)
      this.stop = this.store
        .watchLogs((id, seq) => {
          // null: the connection came back; what was appended meanwhile is read.
          if (id === null) for (const x of this.held.values()) this.readSoon(x);
          else {
            const x = this.held.get(id);
            if (x && seq > x.log.seq) this.readSoon(x);
          }
        })
        .then((stop) => {
          // What was appended between the first reads and the LISTEN.
          for (const x of this.held.values()) this.readSoon(x);
          return stop;
        })
        .catch(() => null);
    this.readSoon(f);
    return f.log;
  }

  /** The job's copy if it is followed. */
  peek(jobId: string): StoredJobLog | null {
    return this.held.get(jobId)?.log ?? null;
  }

  /**
   * Stops following a job's log (an ended job: its pane is no longer live,
   * and `l` reads the store afresh): a board open for days would otherwise
   * hold every remote job's whole log.
   */
  release(jobId: string): void {
    this.held.delete(jobId);
  }

  private readSoon(f: Followed): void {
    if (f.behind || this.closed) return;
    f.behind = true;
    f.reading = f.reading.then(async () => {
      f.behind = false;
      if (this.closed) return;
      try {
        const first = !f.log.readOnce;
        const got = await f.log.readMore(this.store.logs);
        // The first read is told of even when it got nothing: the pane waits for it.
        if ((got.length || first) && !this.closed) this.onLines(f.log.jobId);
      } catch {
        // A lost connection: the watch says when it is back (null), and every log is read then.
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const stop = await this.stop;
    await stop?.();
    await Promise.all([...this.held.values()].map((f) => f.reading));
  }
}
