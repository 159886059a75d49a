// Whether a process, and so a job's runner, is alive, probed from this
// machine (isStale in src/model/derive.ts stays pure and takes the probe).
import { hostname } from 'node:os';

/** A pid on this host is alive when signal 0 reaches it (EPERM: alive, someone else's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** This machine, for isStale: a runner recorded here is alive when its pid is. */
export const localProbe = { host: hostname(), pidAlive };
