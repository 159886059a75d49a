// Whether a process, and so a job's runner, is alive, probed from this
// machine (isStale in src/model/derive.ts stays pure and takes the probe).
import { hostName } from './host.js';
import { isZombie } from './group.js';

/**
 * A pid on this host is alive when signal 0 reaches it (EPERM: alive,
 * someone else's) and it is not a zombie: a runner killed after its parent
 * died is reaped by PID 1, and where that is no init (a container whose
 * first process is a shell or node) it stays a zombie for good, which
 * signal 0 still reaches. Its job would never count as stale.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/** This machine, for isStale: a runner recorded here is alive when its pid is. */
export const localProbe = { host: hostName(), pidAlive };
