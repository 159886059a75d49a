// Processes stepping aside for others on the machine. `ii run` starts its
// job runners at a raised nice value ([run] nice, startNiced): agents, tests
// and git then yield the cores to a person's board, editor and shell, which
// waited for them before (bench/shared-store.bench.js's keypress rows); on
// an idle machine nothing changes, since a nice value only orders processes
// that want the same core. A backlog runner whose job's end is recorded has
// only its wrap-up left (the last iteration's snapshot, the workspace's
// release, the journal), while `ii run` hands its slot to the next job at
// that moment: at the jobs' priority the wrap-up's git and journal took the
// cores the next job's start needed (bench/handover.bench.js), so it steps
// aside further. A raised nice value cannot be lowered again without
// privileges, so only a process with nothing urgent left steps aside.
import { getPriority, setPriority } from 'node:os';

/** How much the nice value is raised: below the jobs that run, not to the floor. */
export const STEP_ASIDE_NICE = 10;

/** Raises this process's nice value by STEP_ASIDE_NICE (at most 19); the git it starts from now inherits it. False if refused. */
export function stepAside(): boolean {
  try {
    setPriority(Math.min(19, getPriority() + STEP_ASIDE_NICE));
    return true;
  } catch {
    return false; // not allowed here: it just competes as before
  }
}

/**
 * The argv that runs `argv` with its nice value raised by `by` (nice(1),
 * which the kernel caps at 19), or `argv` itself for 0. Raised before the
 * program starts, the whole process is lowered (every thread Node starts;
 * setpriority(2) on a running Node lowers only the calling thread on Linux)
 * and everything it starts inherits it.
 */
export function startNiced(argv: readonly string[], by: number): string[] {
  return by > 0 ? ['nice', '-n', String(by), ...argv] : [...argv];
}
