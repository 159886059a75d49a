// Every call into the store goes through its connection's guard: where an
// error SQLite raises for a damaged file becomes StoreDamagedError, and where
// a store found damaged (by this process or another) stops being used, and
// where a write that found the disk full becomes DiskFullError.
import { existsSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
import { StoreDamagedError, UserError } from '../../errors.js';
import {
  closeWithoutWriting,
  damagedMessage,
  damageNoteFile,
  declareDamaged,
  describeFailure,
  integrityProblems,
  isCorruption,
  readDamageNote,
  registerConnection,
  worthChecking,
} from './damage.js';
import { storeDiskFull } from './disk-full.js';

export class GuardedConnection {
  private damaged: StoreDamagedError | null = null;
  private readonly note: string;
  private readonly unregister: () => void;

  constructor(
    private readonly db: DatabaseSync,
    private readonly path: string,
  ) {
    this.note = damageNoteFile(path);
    this.unregister = registerConnection(path, this);
  }

  /**
   * Runs one store call. A note left by another process stops it before it
   * reads or writes (a stat per call: a few microseconds against the
   * hundreds a mutation takes).
   */
  run<R>(fn: () => R): R {
    if (this.damaged) throw this.damaged;
    if (existsSync(this.note)) {
      const note = readDamageNote(this.path);
      if (note)
        throw this.stopAll(new StoreDamagedError(damagedMessage(this.path, note.what, note.found_at)));
    }
    try {
      return fn();
    } catch (err) {
      throw this.classify(err);
    }
  }

  /** The same store with each method run through run(). */
  wrap<T extends object>(store: T): T {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(store))
      out[k] =
        typeof v === 'function'
          ? (...args: unknown[]) => this.run(() => (v as (...a: unknown[]) => unknown).apply(store, args))
          : v;
    return out as T;
  }

  /** Closes the connection; one whose file was found damaged closes without writing. */
  close(): void {
    this.unregister();
    if (this.damaged) return;
    if (existsSync(this.note)) closeWithoutWriting(this.db, this.path);
    else
      try {
        this.db.close();
      } catch (err) {
        // The checkpoint a last close makes can find the disk full: what was
        // committed is in the log, and the next open copies it in.
        if (!storeDiskFull(err, this.path, 'write')) throw err;
      }
  }

  /** Called (for every connection to the file) when it is found damaged. */
  stop(err: StoreDamagedError): void {
    if (this.damaged) return;
    this.damaged = err;
    closeWithoutWriting(this.db, this.path);
  }

  private stopAll(err: StoreDamagedError): StoreDamagedError {
    this.stop(err);
    return err;
  }

  private classify(err: unknown): unknown {
    if (err instanceof StoreDamagedError) return this.stopAll(err);
    if (err instanceof UserError) return err;
    // Before any integrity check: a full disk says nothing about the file.
    const full = storeDiskFull(err, this.path, 'write');
    if (full) return full;
    let what: string | null = null;
    if (isCorruption(err)) what = describeFailure(err);
    else if (worthChecking(err)) {
      // Checked on the error path only: a check of a 10,000-job store takes
      // ~170 ms, more than a short command itself.
      try {
        what = integrityProblems(this.path);
      } catch {
        what = null; // the check could not run: show the error as it is
      }
    }
    return what === null ? err : declareDamaged(this.path, what);
  }
}
