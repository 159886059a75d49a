// Whether a job's runner is alive, probed from this machine (isStale in
// src/model/derive.ts stays pure and takes this probe).
import { hostname } from 'node:os';

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export const localProbe = { host: hostname(), pidAlive };
