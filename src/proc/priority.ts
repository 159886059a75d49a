// A process stepping aside for others on the machine. A backlog runner whose
// job's end is recorded has only its wrap-up left (the last iteration's
// snapshot, the workspace's release, the journal), while `ii run` hands its
// slot to the next job at that moment: at its normal priority the wrap-up's
// git and journal took the cores the next job's start needed
// (bench/handover.bench.js). A raised nice value cannot be lowered again
// without privileges, so only a process with nothing urgent left steps aside.
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
