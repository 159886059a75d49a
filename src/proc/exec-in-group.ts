// A short-lived command (a setup step, a test command) run through execa, as
// the leader of its own process group recorded for its job. execa does what
// it does well: the timeout and the cancel signal (SIGTERM to the command,
// SIGKILL after the grace if it will not go), an error that names the
// command, the exit code or signal in one result. It cannot end a process
// group, so what the command left running (in the background, or ignoring
// the signal) is ended here with the pid-reuse-guarded endGroup, and the
// group's record is dropped once it is gone. execa is imported when the
// first command runs: `ii job list` and the other short commands never load it.
import { constants, getPriority } from 'node:os';
import type { Readable } from 'node:stream';
import { endGroup, startTicks } from './group.js';
import { niceSession, startNiced } from './priority.js';
import type { GroupRecorder } from './recorded.js';

export interface ExecInGroupOptions {
  cwd: string;
  /** The whole environment (nothing of ours is added to it). */
  env: NodeJS.ProcessEnv;
  /** The command is ended after this long (its result says timedOut). */
  timeoutMs?: number;
  /** Aborting ends the command (its result says canceled). */
  signal?: AbortSignal;
  /** SIGTERM to SIGKILL, for the command and then for what is left of its group. */
  graceMs: number;
  /** Records the group for the job while it runs (src/proc/recorded.ts). */
  record?: { recorder: GroupRecorder; label: string };
  /** Each chunk of its output as it comes, in the order it arrives. */
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  /**
   * Its nice value raised by this much over this process's (nice(1), and its
   * session's with it): ii run's landing tests, at its jobs' [run] nice
   * while ii run itself stays at the caller's.
   */
  nice?: number;
}

export interface ExecInGroupResult {
  /** Its exit code, 128 + the signal's number when a signal ended it, or null when it never started. */
  code: number | null;
  timedOut: boolean;
  canceled: boolean;
  /** Why it could not start (execa's message, naming the command), when it did not. */
  startError?: string;
}

/** Loads execa ahead of the first command (ii run's standby runner, while it waits for its todo). */
export async function loadExeca(): Promise<void> {
  await import('execa');
}

/** Runs `file args` in its own process group until it and all it started are gone. */
export async function execInGroup(
  file: string,
  args: string[],
  o: ExecInGroupOptions,
): Promise<ExecInGroupResult> {
  const by = o.nice ?? 0;
  const r = await execOnce(by > 0 ? startNiced([file, ...args], by) : [file, ...args], o);
  // No nice(1) here: it runs at this process's priority rather than not at all.
  if (by > 0 && r.startError !== undefined && r.code === null) return execOnce([file, ...args], o);
  return r;
}

async function execOnce([file, ...args]: string[], o: ExecInGroupOptions): Promise<ExecInGroupResult> {
  const { execa } = await import('execa');
  const sub = execa(file!, args, {
    cwd: o.cwd,
    env: o.env,
    extendEnv: false,
    stdin: 'ignore',
    // Streamed to onOutput, never held: a test may print gigabytes, and
    // past maxBuffer execa would end it for that.
    buffer: false,
    detached: true,
    cleanup: false, // a dead runner's groups are ended from their record instead
    reject: false,
    ...(o.timeoutMs !== undefined ? { timeout: o.timeoutMs } : {}),
    ...(o.signal ? { cancelSignal: o.signal } : {}),
    forceKillAfterDelay: o.graceMs,
  });
  const pid = sub.pid;
  // A session of its own: lowered with its starter (a runner of ii run's), and as much more as it is asked.
  niceSession(pid, getPriority() + (o.nice ?? 0));
  // Taken now, while the leader cannot have been reaped: the group's identity for endGroup.
  const leaderStart = pid !== undefined ? startTicks(pid) : null;
  const group = pid !== undefined && o.record ? o.record.recorder(pid, o.record.label, leaderStart) : null;
  for (const [name, stream] of [
    ['stdout', sub.stdout],
    ['stderr', sub.stderr],
  ] as const)
    (stream as Readable | null)?.on('data', (b: Buffer) => o.onOutput?.(name, b.toString('utf8')));
  let ended: Promise<boolean> | null = null;
  // The leader is gone: whatever it left in its group would hold the pipes open and outlive the step.
  const endRest = () =>
    (ended ??= pid === undefined ? Promise.resolve(true) : endGroup(pid, leaderStart, o.graceMs));
  sub.nodeChildProcess.once('exit', () => void endRest());
  const r = await sub;
  if (await endRest()) await group?.forget(); // one that outlived even SIGKILL keeps its record: a later cleanup retries
  if (pid === undefined || (r.exitCode === undefined && !r.signal))
    return { code: null, timedOut: false, canceled: false, startError: r.shortMessage };
  const code = r.exitCode ?? 128 + (r.signal ? (constants.signals[r.signal] ?? 0) : 0);
  return { code, timedOut: r.timedOut, canceled: r.isCanceled };
}
