// Space kept beside the database for a job's last words. A disk that fills
// while a job runs leaves no room to record that the job failed, and a job
// left recorded as running is a mystery to whoever looks next. So the
// commands that run jobs keep a file of RESERVE_BYTES next to state.db; a
// runner that cannot record its job's end for want of space deletes it and
// tries again. The next such command, once there is space, makes it again.
import { closeSync, existsSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

/** Enough for the end of a job: its record, its session and workspace, the todo, the last events. */
export const RESERVE_BYTES = 1024 * 1024;

export const reserveFile = (dbPath: string): string => `${dbPath}-reserve`;

/** Makes the reserve when it is missing; on a disk too full for it, leaves none (and no part of one). */
export function keepReserve(dbPath: string): void {
  const file = reserveFile(dbPath);
  if (existsSync(file)) return;
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, 'w', 0o600);
    try {
      // Real bytes, not a sparse file: only written blocks hold space.
      const chunk = Buffer.alloc(64 * 1024);
      for (let n = 0; n < RESERVE_BYTES; n += chunk.length) writeSync(fd, chunk);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
  }
}

/** Deletes the reserve: true when there was one to free. */
export function freeReserve(dbPath: string): boolean {
  const file = reserveFile(dbPath);
  if (!existsSync(file)) return false;
  try {
    rmSync(file);
    return true;
  } catch {
    return false;
  }
}
