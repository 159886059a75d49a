// The process groups of this process's git runs that talk to a remote (push,
// fetch, ls-remote), while they run. Each leads a session of its own (so a
// timeout can end git with its ssh or receive-pack), which also puts it out
// of the terminal's reach: Ctrl-C signals the foreground group, ii alone,
// and git would go on with no bound. So while any is live, the CLI's exit
// and SIGINT/SIGTERM/SIGHUP end them whole here. When ours is the only
// listener of the signal (a command with the default handling, such as
// ii job diff or ii doctor), the signal is raised again once they are
// ended, so the command dies of it as it would have. kill -9 of the process
// cannot be caught: a runner's pushes are recorded for their job besides
// (src/proc/recorded.ts) and the dead-runner cleanup ends them; a group
// started outside a job (ii job diff's fetch, ii doctor's ls-remote, a
// landing's push) is then left running, unbounded: nothing of ours is left
// to end it, and Node has no parent-death signal to give it.
// (src/proc's group tools are not used here: src/proc reaches src/state,
// which reaches src/vcs.)
import { readFileSync } from 'node:fs';

/** pgid → its leader's start time, which guards every signal against pid reuse. */
const live = new Map<number, number | null>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * When `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat),
 * or null where it cannot be read: with the pid, it names one process for good.
 */
export function startTicks(pid: number): number | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const t = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isFinite(t) ? t : null;
  } catch {
    return null;
  }
}

function endAll(): void {
  for (const [pgid, start] of live) {
    // Only while its leader is still the git we started (once it has exited
    // and been reaped, its pid may name another group); where /proc could not
    // be read at the start, nothing can be told apart and it is ended.
    if (start !== null && startTicks(pgid) !== start) continue;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {} // gone meanwhile
  }
}

function onSignal(sig: NodeJS.Signals): void {
  endAll();
  // Nobody else handles it: die of it, as the default handling would have.
  if (process.listenerCount(sig) === 1) {
    uninstall();
    process.kill(process.pid, sig);
  }
}

function install(): void {
  process.on('exit', endAll);
  for (const sig of SIGNALS) process.on(sig, onSignal);
}

function uninstall(): void {
  process.off('exit', endAll);
  for (const sig of SIGNALS) process.off(sig, onSignal);
}

/**
 * Keeps the group led by `pgid` (started at `leaderStart` ticks) to be ended
 * on this process's exit or a terminating signal; returns the call that
 * stops keeping it (once the group is done).
 */
export function trackGroup(pgid: number, leaderStart: number | null): () => void {
  if (live.size === 0) install();
  live.set(pgid, leaderStart);
  return () => {
    if (!live.delete(pgid)) return;
    if (live.size === 0) uninstall();
  };
}

/** How many groups are kept now (for tests). */
export function liveGroupCount(): number {
  return live.size;
}
