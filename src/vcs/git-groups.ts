// The process groups of this process's git runs that talk to a remote (push,
// fetch, ls-remote), while they run. Each leads a session of its own (so a
// timeout can end git with its ssh or receive-pack), which also puts it out
// of the terminal's reach: Ctrl-C signals the foreground group, ii alone,
// and git would go on with no bound. So while any is live, the CLI's exit
// and SIGINT/SIGTERM/SIGHUP end them whole here. When ours is the only
// listener of the signal (a command with the default handling, such as
// ii job diff or ii doctor), the signal is raised again once they are
// ended, so the command dies of it as it would have.
//
// kill -9 of the process cannot be caught, and Node has no parent-death
// signal to give (nor would one reach git's ssh or helpers). So each group
// has a guard: a small shell in a session of its own, reading a pipe only
// this process holds. When this process ends, however it ends, the pipe
// closes and the guard ends the group (a fetch of ii job diff, a landing's
// push, ii doctor's ls-remote: started outside any job, with no record for
// a later cleanup to end them from). When the group is done, the guard is
// killed unheard. A runner's pushes are recorded for their job besides
// (src/proc/recorded.ts), for a machine that went down with its runner.
// (src/proc's group tools are not used here: src/proc reaches src/state,
// which reaches src/vcs.)
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';

/** pgid → its leader's start time, which guards every signal against pid reuse. */
const live = new Map<number, number | null>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Gives the session `pgid` leads (a git started detached: setsid) this
 * process's nice value where Linux schedules each session as one
 * (autogroup), so that a niced runner's remote git is lowered with it; as
 * proc/priority.ts niceSession does for the agents and tests (src/vcs cannot
 * import src/proc: the folders would import each other). Never throws.
 */
export function niceGroupSession(pgid: number): void {
  const nice = getPriority();
  if (nice <= 0) return;
  try {
    writeFileSync(`/proc/${pgid}/autogroup`, String(Math.min(19, nice)));
  } catch {} // no autogroups (another system or kernel), or git is gone already
}

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
 * The guard's script: $1 the group, $2 its leader's start ticks ("-": not
 * known). It waits for end-of-file on its stdin (ours ended), then ends the
 * group unless its leader's pid now names another process. While the group
 * has a member its id cannot be taken by another process; once it has none,
 * the kill finds nothing. Signals that end a terminal session are ignored:
 * only the pipe says when.
 */
const GUARD = `trap '' INT TERM HUP
while read -r _; do :; done
t=$(sed -n 's/.*) //p' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20)
if [ -z "$t" ] || [ "$2" = - ] || [ "$t" = "$2" ]; then kill -9 "-$1"; fi`;

/** Starts the guard of group `pgid`; null where it could not start (the exit and signal handlers still end it). */
function guard(pgid: number, leaderStart: number | null): ChildProcess | null {
  try {
    const g = spawn('sh', ['-c', GUARD, 'ii-git-guard', String(pgid), String(leaderStart ?? '-')], {
      cwd: '/', // holds no folder of a job's, and is never taken for what works in one
      detached: true, // out of the terminal's group: Ctrl-C is ours to handle, not its
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    g.on('error', () => {}); // no sh: the group is still ended on exit and signals
    g.stdin?.on('error', () => {});
    // Never keeps Node running.
    g.unref();
    (g.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return g;
  } catch {
    return null;
  }
}

/**
 * Keeps the group led by `pgid` (started at `leaderStart` ticks) to be ended
 * on this process's exit or a terminating signal, or by its guard when this
 * process is killed outright; returns the call that stops keeping it (once
 * the group is done).
 */
export function trackGroup(pgid: number, leaderStart: number | null): () => void {
  if (live.size === 0) install();
  live.set(pgid, leaderStart);
  const g = guard(pgid, leaderStart);
  return () => {
    // Killed, not told: its pipe's end would have it end the group.
    if (g && g.exitCode === null && g.signalCode === null) g.kill('SIGKILL');
    if (!live.delete(pgid)) return;
    if (live.size === 0) uninstall();
  };
}

/** How many groups are kept now (for tests). */
export function liveGroupCount(): number {
  return live.size;
}
