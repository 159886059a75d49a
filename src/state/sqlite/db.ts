// Opening the database: checks that never modify a file we cannot trust,
// then forward migrations, WAL and a busy timeout for many processes.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { UserError } from '../../errors.js';
import {
  closeWithoutWriting,
  declareDamaged,
  describeFailure,
  isCorruption,
  refuseIfNoted,
} from './damage.js';
import { registerCodec } from './codec.js';
import { storeDiskFull } from './disk-full.js';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.js';

const SQLITE_MAGIC = 'SQLite format 3\0';
const SQLITE_BUSY = 5;

/**
 * How long a write waits for the store's lock before it gives up with a
 * UserError: generous, since 32 runners on 2 cores can queue for many seconds.
 * II_STATE_BUSY_MS shortens or lengthens it (tests, very busy machines).
 */
function writeWaitMs(): number {
  const n = Number(process.env.II_STATE_BUSY_MS);
  return Number.isFinite(n) && n > 0 ? n : 60_000;
}

/** SQLite's own busy handler per attempt; transaction() retries up to writeWaitMs(). */
const busyTimeoutMs = (): number => Math.min(10_000, writeWaitMs());

function fail(path: string, what: string, todo: string): never {
  throw new UserError(`state database ${path} ${what}.\n${todo}`, 3);
}

/** Refuse a file that is not SQLite before SQLite gets a chance to touch it. */
export function checkHeader(path: string): void {
  const size = statSync(path).size;
  if (size === 0) return; // an empty file is what SQLite itself makes on first open
  const buf = Buffer.alloc(16);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (buf.toString('latin1') !== SQLITE_MAGIC) {
    fail(
      path,
      'is not an SQLite database (its header is wrong)',
      'It was left untouched. Move it aside (e.g. mv state.db state.db.bad) to start with an empty state, or restore it from a backup.',
    );
  }
}

export interface OpenOptions {
  /**
   * Run PRAGMA quick_check before use (every migration, and commands that
   * run long anyway: ~170 ms on a 10,000-job store, more than a short command).
   */
  integrityCheck?: boolean;
  /**
   * SQLite's page cache, in KiB (its default is 2,000): the board reads a
   * 10,000-job store once and then a few rows at a time, and a full cache
   * held ~2.6 MB of its RSS for nothing (bench/dashboard.bench.js).
   */
  cacheKb?: number;
  /**
   * Read the file through a memory map (PRAGMA mmap_size) rather than a
   * pread(2) and a copy per page: for a command that reads most of a large
   * store once (`ii job list --json` reads ~17 MB of pages for 1,000 jobs:
   * 2,400 preads). Writes still go through write(2) (SQLite's default).
   */
  mapped?: boolean;
}

/** The most of the file a mapped open maps (SQLite maps only what the file holds). */
const MAP_BYTES = 1 << 30;

export function openDatabase(path: string, opts: OpenOptions = {}): DatabaseSync {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw storeDiskFull(err, path, 'open') ?? err;
  }
  refuseIfNoted(path);
  const existed = existsSync(path);
  if (existed) checkHeader(path);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
  } catch (err) {
    const full = storeDiskFull(err, path, 'open');
    if (full) throw full;
    fail(
      path,
      `cannot be opened: ${(err as Error).message}`,
      'Check its permissions and the free disk space.',
    );
  }
  try {
    if (!existed) chmodSync(path, 0o600);
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs()}`);
    if (opts.mapped) db.exec(`PRAGMA mmap_size = ${MAP_BYTES}`);
    const version = userVersion(db);
    if (version > SCHEMA_VERSION) {
      fail(
        path,
        `has schema version ${version}, newer than this build of incrementum knows (${SCHEMA_VERSION})`,
        'It was left untouched. Upgrade incrementum (git pull && npm install), or point XDG_STATE_HOME elsewhere.',
      );
    }
    if (opts.integrityCheck || (version < SCHEMA_VERSION && existed && version > 0)) quickCheck(db);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('PRAGMA foreign_keys = OFF');
    if (opts.cacheKb !== undefined) db.exec(`PRAGMA cache_size = ${-Math.max(1, Math.floor(opts.cacheKb))}`);
    if (version < SCHEMA_VERSION) migrate(db, version);
    return db;
  } catch (err) {
    const full = storeDiskFull(err, path, 'open');
    if (full) {
      try {
        db.close();
      } catch {}
      throw full;
    }
    if (err instanceof FailedCheck || isCorruption(err)) {
      closeWithoutWriting(db, path);
      throw declareDamaged(path, err instanceof FailedCheck ? err.message : describeFailure(err));
    }
    db.close();
    if (err instanceof UserError) throw err;
    return corrupt(path, err);
  }
}

function userVersion(db: DatabaseSync): number {
  const row = db.prepare('PRAGMA user_version').get() as { user_version: number };
  return row.user_version;
}

/** What an integrity check found, on its way to openDatabase's handler. */
class FailedCheck extends Error {}

export function quickCheck(db: DatabaseSync): void {
  const rows = db.prepare('PRAGMA quick_check(5)').all() as { quick_check: string }[];
  if (rows.length !== 1 || rows[0]?.quick_check !== 'ok')
    throw new FailedCheck(
      `its integrity check failed (${rows
        .map((r) => r.quick_check)
        .join('; ')
        .replace(/\*\*\* in database main \*\*\*\s*/g, '')
        .replace(/\s+/g, ' ')})`,
    );
}

function corrupt(path: string, err: unknown): never {
  fail(
    path,
    `cannot be read: ${(err as Error).message}`,
    'It was left untouched. Restore a backup, or move it aside (mv state.db state.db.bad) to start with an empty state.',
  );
}

/** Applies the migrations after `from`, each in its own transaction. */
export function migrate(db: DatabaseSync, from: number, to: number = SCHEMA_VERSION): void {
  // Migrations may call the codec's functions (20 judges the listing texts kept).
  registerCodec(db);
  for (let v = from; v < to; v++) {
    beginImmediate(db);
    try {
      // Another process may have migrated while we waited for the lock.
      const now = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
      if (now > v) {
        db.exec('COMMIT');
        v = now - 1;
        continue;
      }
      db.exec(MIGRATIONS[v] as string);
      db.exec(`PRAGMA user_version = ${v + 1}`);
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  }
}

const caches = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/**
 * A prepare() that compiles each SQL text once per connection. Compiling is
 * most of the cost of a small mutation, and the stores run the same few
 * statements over and over.
 */
export function statements(db: DatabaseSync): (sql: string) => StatementSync {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  const c = cache;
  return (sql) => {
    let st = c.get(sql);
    if (!st) c.set(sql, (st = db.prepare(sql)));
    return st;
  };
}

const isBusy = (err: unknown): boolean => {
  const e = err as { code?: unknown; errcode?: unknown } | null;
  return (
    e?.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number' && (e.errcode & 0xff) === SQLITE_BUSY
  );
};

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * BEGIN IMMEDIATE, waiting its turn for the write lock. SQLite's busy handler
 * gives up after busy_timeout, gives up at once in some cases (WAL recovery or
 * a checkpoint holding a lock), and is not fair: under heavy contention (32
 * runners on 2 cores) a waiter can lose every race for 10 s. So a BUSY is
 * retried after a short random pause until writeWaitMs() has passed, then
 * reported as a UserError. Nothing has been written when BEGIN fails.
 */
function beginImmediate(db: DatabaseSync): void {
  const start = Date.now();
  const bound = writeWaitMs();
  for (;;) {
    try {
      db.exec('BEGIN IMMEDIATE');
      return;
    } catch (err) {
      if (!isBusy(err)) throw err;
      const waited = Date.now() - start;
      if (waited >= bound) {
        throw new UserError(
          `state database ${db.location() ?? '(in memory)'} stayed busy for ${Math.round(waited / 1000)} s: other incrementum processes held its write lock the whole time, so nothing was changed.\n` +
            'Run the command again. If it keeps happening, run fewer jobs at once (ii run --jobs N), look for a stuck ii process (ps aux | grep ii), or wait longer by setting II_STATE_BUSY_MS (milliseconds).',
          3,
        );
      }
      Atomics.wait(pause, 0, 0, Math.min(bound - waited, 5 + Math.random() * 45));
    }
  }
}

/**
 * The store version the current transaction commits (transaction() adds one
 * at its end), stamped on every job and todo it writes: writers hold the write
 * lock from BEGIN IMMEDIATE, so versions follow commit order whatever the
 * clocks say, and a reader asks for what was written after the version it saw.
 */
export const NEXT_VERSION = "(SELECT value + 1 FROM meta WHERE key = 'version')";

/**
 * Runs `fn` in one write transaction; the lock is taken up front so concurrent writers queue instead of failing.
 * `bump` false: the store version stays (a job's log lines change no row a reader of versions reloads).
 */
export function transaction<T>(db: DatabaseSync, fn: () => T, bump = true): T {
  beginImmediate(db);
  try {
    const out = fn();
    if (bump) statements(db)("UPDATE meta SET value = value + 1 WHERE key = 'version'").run();
    db.exec('COMMIT');
    return out;
  } catch (err) {
    try {
      db.exec('ROLLBACK');
    } catch {}
    throw err;
  }
}
