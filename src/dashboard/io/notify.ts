// Telling a person that a job waits for them: when a job's permission
// request starts waiting, the terminal's bell rings once and the configured
// [notify] command runs once, for that request, never twice. The command runs
// in its own process group, detached from the board (nothing it does blocks a
// frame), and is ended after a bounded time: no process is left behind.
import type { NotifySection } from '../../model/config.js';
import type { Job } from '../../model/job.js';
import { isWholeJob, type BoardJob } from '../../model/job-card.js';
import { spawnInGroup, type GroupChild } from '../../proc/recorded.js';
import { shownLine } from '../../text/shown.js';
import { askMarker, openAsk } from '../view/needs-you.js';

/** The terminal's bell. */
export const BELL = '\x07';
/** Longest a notify command may run before its group is ended. */
export const NOTIFY_TIMEOUT_MS = 10_000;
/** Most characters of one environment value (a title, a command): a notification is a line. */
const MAX_VALUE = 500;

export interface NotifierOptions {
  config?: NotifySection;
  /** Rings the bell; writes BEL to the terminal by default. */
  bell?: () => void;
  /** Says what went wrong running the command (the status bar). */
  onError?: (message: string) => void;
  timeoutMs?: number;
}

const value = (s: string) => {
  const v = shownLine(s);
  return v.length <= MAX_VALUE ? v : `${v.slice(0, MAX_VALUE - 1)}…`;
};

/** The environment a notify command gets: the job, its todo's title, the question; each escaped, redacted and cut. */
export function notifyEnv(job: Job, title: string): Record<string, string> {
  const ask = openAsk(job);
  return {
    II_JOB_ID: job.id,
    II_TODO_TITLE: value(title),
    II_QUESTION: ask ? value(`${askMarker(ask)}${ask.title ? ` (${ask.title})` : ''}`) : '',
  };
}

export class AskNotifier {
  private config: NotifySection;
  /** The requests told about (job id and request id), or open when the board started. */
  private readonly seen = new Set<string>();
  private readonly running = new Set<GroupChild>();
  private primed = false;
  private closed = false;

  constructor(private readonly o: NotifierOptions = {}) {
    this.config = o.config ?? { bell: true };
  }

  /** The [notify] section, once the config is read (the bell rings meanwhile, as by default). */
  setConfig(config: NotifySection): void {
    this.config = config;
  }

  /**
   * Looks at the jobs after each change: a request not seen before rings and
   * runs the command. The first call only takes note of the requests open
   * then: the person is looking at the board that shows them.
   */
  update(jobs: readonly BoardJob[], titles: Record<string, string>): void {
    if (this.closed) return;
    const fresh: Job[] = [];
    for (const job of jobs) {
      const ask = openAsk(job);
      // A job that asks is active, so whole (a card is a finished job).
      if (!ask || !isWholeJob(job)) continue;
      const key = `${job.id}:${ask.id}`;
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      if (this.primed) fresh.push(job);
    }
    this.primed = true;
    for (const job of fresh) this.tell(job, titles[job.todo_id] ?? job.todo_id);
  }

  private tell(job: Job, title: string): void {
    if (this.config.bell) (this.o.bell ?? (() => process.stdout.write(BELL)))();
    const argv = this.config.command;
    if (!argv?.length) return;
    let g: GroupChild;
    try {
      g = spawnInGroup(argv[0]!, argv.slice(1), {
        env: { ...process.env, ...notifyEnv(job, title) },
        // Its output would write over the board.
        stdio: 'ignore',
      });
    } catch (err) {
      return this.o.onError?.(`[notify] command: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.running.add(g);
    const timer = setTimeout(() => void g.stop(1000), this.o.timeoutMs ?? NOTIFY_TIMEOUT_MS);
    timer.unref();
    g.child.once('error', (err) => this.o.onError?.(`[notify] command ${argv[0]}: ${err.message}`));
    g.child.once('close', () => {
      clearTimeout(timer);
      // What it left running in its group goes too.
      void g.stop(1000).finally(() => this.running.delete(g));
    });
  }

  /** Ends every command still running (the board quits). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.running].map((g) => g.stop(1000)));
    this.running.clear();
  }
}
