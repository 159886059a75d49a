// When SQLite says the state database is damaged (a bad page, a header it
// cannot read): the command stops with StoreDamagedError (exit 3), every
// connection of this process to the file closes without copying its
// write-ahead log into it, and a note beside the file makes every later
// command, in any process, refuse the file before SQLite opens it. So nothing
// more is written until the user has moved it aside; the message says how.
import { existsSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { StoreDamagedError } from '../../errors.js';

const SQLITE_CORRUPT = 11;
const SQLITE_NOTADB = 26;
/** Conditions that say nothing about the file: busy, locked, read-only, disk full, a constraint. */
const NOT_DAMAGE = new Set([5, 6, 8, 13, 19]);

interface SqliteFailure {
  code?: unknown;
  errcode?: unknown;
  errstr?: unknown;
}

export const primaryCode = (err: unknown): number | null => {
  const e = err as SqliteFailure | null;
  return e?.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number' ? e.errcode & 0xff : null;
};

/** SQLITE_CORRUPT or SQLITE_NOTADB (any extended code of either). */
export function isCorruption(err: unknown): boolean {
  const c = primaryCode(err);
  return c === SQLITE_CORRUPT || c === SQLITE_NOTADB;
}

/**
 * An error that may come from a damaged file without SQLite calling it
 * corruption (a row that no longer parses, an odd SQLite error): worth an
 * integrity check before it is shown as it is.
 */
export function worthChecking(err: unknown): boolean {
  const c = primaryCode(err);
  if (c !== null) return !NOT_DAMAGE.has(c);
  return err instanceof Error;
}

// ─── the note beside the file ─────────────────────────────────────────────

/** Named so that `mv state.db* somewhere/` takes it along with the file, its -wal and -shm. */
export const damageNoteFile = (dbPath: string): string => `${dbPath}-damaged`;

interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtime_ms: number;
}

export interface DamageNote {
  found_at: string;
  what: string;
  /** The file the note is about: a file put in its place (recovered, restored) is not refused. */
  file: FileIdentity | null;
}

function identity(path: string): FileIdentity | null {
  try {
    const s = statSync(path);
    return { dev: s.dev, ino: s.ino, size: s.size, mtime_ms: s.mtimeMs };
  } catch {
    return null;
  }
}

const sameFile = (a: FileIdentity | null, b: FileIdentity | null): boolean =>
  a !== null &&
  b !== null &&
  a.dev === b.dev &&
  a.ino === b.ino &&
  a.size === b.size &&
  a.mtime_ms === b.mtime_ms;

/** The note, when there is one; one that cannot be read is taken as a note about this very file. */
export function readDamageNote(dbPath: string): DamageNote | null {
  let text: string;
  try {
    text = readFileSync(damageNoteFile(dbPath), 'utf8');
  } catch {
    return null;
  }
  try {
    const n = JSON.parse(text) as Partial<DamageNote>;
    if (typeof n.what === 'string' && typeof n.found_at === 'string')
      return { found_at: n.found_at, what: n.what, file: n.file ?? identity(dbPath) };
  } catch {}
  return {
    found_at: 'an earlier run',
    what: `its note ${damageNoteFile(dbPath)} says so`,
    file: identity(dbPath),
  };
}

/** The note when it is about the file now at dbPath, else null. */
export function currentDamageNote(dbPath: string): DamageNote | null {
  const note = readDamageNote(dbPath);
  return note && sameFile(note.file, identity(dbPath)) ? note : null;
}

/**
 * Before SQLite opens the file: refuse it when a note says it was found
 * damaged. A note about a file that has since been replaced or repaired
 * (another inode, size or mtime) is removed.
 */
export function refuseIfNoted(dbPath: string): void {
  if (!existsSync(damageNoteFile(dbPath))) return;
  const note = currentDamageNote(dbPath);
  if (note) throw new StoreDamagedError(damagedMessage(dbPath, note.what, note.found_at));
  try {
    unlinkSync(damageNoteFile(dbPath));
  } catch {}
}

function writeNote(dbPath: string, what: string): string {
  const found_at = new Date().toISOString();
  const note: DamageNote = { found_at, what, file: identity(dbPath) };
  const file = damageNoteFile(dbPath);
  try {
    writeFileSync(`${file}.tmp`, JSON.stringify(note) + '\n', { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  } catch {
    // A folder we cannot write to: later commands find the damage again themselves.
  }
  return found_at;
}

// ─── closing without writing ──────────────────────────────────────────────

/**
 * Closes a connection without writing to the file. The last connection to
 * close copies the write-ahead log into the database (a checkpoint) and
 * deletes the log; a read-only connection that still holds the file makes
 * this one not the last, and cannot checkpoint itself when it closes. With
 * an empty log a plain close writes nothing, and removes the empty -wal and
 * -shm this process made.
 */
export function closeWithoutWriting(db: DatabaseSync, dbPath: string): void {
  if (!db.isOpen) return;
  let holder: DatabaseSync | null = null;
  if (walSize(dbPath) > 0) {
    try {
      holder = new DatabaseSync(dbPath, { readOnly: true });
      holder.prepare('PRAGMA user_version').get();
    } catch {
      try {
        holder?.close();
      } catch {}
      holder = null;
    }
  }
  try {
    db.close();
  } catch {}
  try {
    holder?.close();
  } catch {}
}

function walSize(dbPath: string): number {
  try {
    return statSync(`${dbPath}-wal`).size;
  } catch {
    return 0;
  }
}

// ─── what the user is told ────────────────────────────────────────────────

/** A path as the user can paste it into a shell. */
const sh = (p: string): string => (/^[\w./@%+=:,-]+$/.test(p) ? p : `'${p.replaceAll("'", `'\\''`)}'`);

/** What to do with a damaged file: move it aside (a copy to keep), then recover or start fresh. */
export function damageAdvice(dbPath: string, now = new Date()): string[] {
  const stamp = now.toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');
  const aside = join(dirname(dbPath), `damaged-${stamp}`);
  return [
    'Move it aside with its -wal and -shm files (that is the copy to keep), then recover what it holds into a new one; skip the second line to start fresh:',
    `  mkdir ${sh(aside)} && mv ${sh(dbPath)}* ${sh(aside)}/`,
    `  sqlite3 ${sh(join(aside, basename(dbPath)))} .recover | sqlite3 ${sh(dbPath)}`,
    '`ii doctor` runs SQLite’s integrity check on it.',
  ];
}

export function damagedMessage(dbPath: string, what: string, foundAt?: string): string {
  return [
    `state database ${dbPath} is damaged: ${what}.`,
    foundAt
      ? `It was found damaged at ${foundAt}; nothing has been written to it since.`
      : 'Nothing more was written to it.',
    ...damageAdvice(dbPath),
  ].join('\n');
}

// ─── declaring it damaged ─────────────────────────────────────────────────

/** The open connections of this process, by file: found damaged, all of them stop. */
const connections = new Map<string, Set<{ stop(err: StoreDamagedError): void }>>();

export function registerConnection(dbPath: string, c: { stop(err: StoreDamagedError): void }): () => void {
  let set = connections.get(dbPath);
  if (!set) connections.set(dbPath, (set = new Set()));
  set.add(c);
  return () => set.delete(c);
}

/**
 * The file is damaged: every connection of this process to it stops (closed
 * without writing), then the note is left beside it. Returns the error to throw.
 */
export function declareDamaged(dbPath: string, what: string): StoreDamagedError {
  const err = new StoreDamagedError(damagedMessage(dbPath, what));
  for (const c of [...(connections.get(dbPath) ?? [])]) c.stop(err);
  writeNote(dbPath, what);
  return err;
}

/** What a corruption error says, in a few words. */
export function describeFailure(err: unknown): string {
  const e = err as SqliteFailure;
  const msg = typeof e?.errstr === 'string' ? e.errstr : err instanceof Error ? err.message : String(err);
  const c = primaryCode(err);
  return c === SQLITE_CORRUPT
    ? `${msg} (SQLITE_CORRUPT)`
    : c === SQLITE_NOTADB
      ? `${msg} (SQLITE_NOTADB)`
      : msg;
}

// ─── checking ─────────────────────────────────────────────────────────────

/**
 * SQLite's integrity check of the file through a read-only connection (which
 * never writes to it): null when it passes, else what it found; throws when
 * the check could not run (the file is locked, unreadable). `full` runs
 * integrity_check (indexes against tables too) instead of quick_check.
 * Once a note says the file is damaged no one writes to it, so an empty log
 * can be skipped (immutable): not even an -shm is made.
 */
export function integrityProblems(dbPath: string, o: { full?: boolean; max?: number } = {}): string | null {
  const max = o.max ?? 5;
  const immutable = walSize(dbPath) === 0 && currentDamageNote(dbPath) !== null;
  let db: DatabaseSync | null = null;
  try {
    if (immutable) {
      const url = pathToFileURL(dbPath);
      url.searchParams.set('immutable', '1');
      db = new DatabaseSync(url, { readOnly: true });
    } else db = new DatabaseSync(dbPath, { readOnly: true });
    db.exec('PRAGMA busy_timeout = 10000');
    const pragma = o.full ? 'integrity_check' : 'quick_check';
    const rows = db.prepare(`PRAGMA ${pragma}(${max})`).all() as Record<string, string>[];
    const found = rows.map((r) => String(Object.values(r)[0]));
    if (found.length === 1 && found[0] === 'ok') return null;
    return found
      .join('; ')
      .replace(/\*\*\* in database main \*\*\*\s*/g, '')
      .replace(/\s+/g, ' ');
  } catch (err) {
    if (isCorruption(err)) return describeFailure(err);
    throw err;
  } finally {
    try {
      db?.close();
    } catch {}
  }
}

export interface StoreInspection {
  /** What SQLite's integrity check found, null when it passed. */
  problems: string | null;
  /** The note an earlier command left when it found the file damaged. */
  note: { found_at: string; what: string } | null;
}

/** ii doctor: the full integrity check, and any note, without writing to the file. */
export function inspectStoreFile(dbPath: string): StoreInspection {
  const note = currentDamageNote(dbPath);
  return {
    problems: integrityProblems(dbPath, { full: true }),
    note: note ? { found_at: note.found_at, what: note.what } : null,
  };
}
