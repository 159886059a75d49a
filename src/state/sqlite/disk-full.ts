// When SQLite cannot write for want of space: SQLITE_FULL ("database or disk
// is full") from a write, or, opening the file, "disk I/O error" because the
// -shm file could not grow. Either way the command stops with DiskFullError
// (exit 3) naming the file, never as damage or an internal error: the
// transaction was rolled back and the file is as it was.
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { asDiskFull, DiskFullError } from '../../errors.js';
import { primaryCode } from './damage.js';

const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
/** Less than this left and an I/O error is taken for a full disk: SQLite grows its -shm by 32 KiB. */
const LOW_SPACE = 1024 * 1024;

const CONSEQUENCE = {
  open: 'The state database could not be opened (SQLite needs a little space even to read it); nothing it holds is lost.',
  write: 'The state database could not be written: the change was not made, and nothing it held is lost.',
};

/** The DiskFullError an error from SQLite (or from making the state folder) stands for, or null. */
export function storeDiskFull(err: unknown, dbPath: string, when: 'open' | 'write'): DiskFullError | null {
  if (err instanceof DiskFullError) return err;
  const c = primaryCode(err);
  if (c === SQLITE_FULL || (c === SQLITE_IOERR && lowOnSpace(dirname(dbPath))))
    return new DiskFullError(dbPath, CONSEQUENCE[when]);
  return c === null ? asDiskFull(err, dbPath) : null;
}

function lowOnSpace(dir: string): boolean {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize < LOW_SPACE;
  } catch {
    return false;
  }
}
