// The store's side of a damaged state.db (src/state/sqlite/damage.ts,
// guard.ts): a connection that meets a bad page stops every connection of the
// process to the file without copying its write-ahead log in, and leaves a
// note that stops the others; a note about a file since replaced is dropped.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreDamagedError } from '../../src/errors.js';
import { openStateStore } from '../../src/state/index.js';
import { isCorruption } from '../../src/state/sqlite/damage.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let dir: string;
let db: string;
beforeEach(() => {
  tmp = tempDir('ii-damage-unit-');
  dir = join(tmp.path, 'incrementum');
  db = join(dir, 'state.db');
});
afterEach(() => tmp.cleanup());

const hash = (f: string) =>
  existsSync(f) ? createHash('sha256').update(readFileSync(f)).digest('hex') : 'absent';
const files = () => ({ db: hash(db), wal: hash(`${db}-wal`) });

/** Overwrites the first leaf page of `table` in the file with garbage. */
function damage(table: string): void {
  const raw = new DatabaseSync(db, { readOnly: true });
  const { page_size } = raw.prepare('PRAGMA page_size').get() as { page_size: number };
  const { pageno } = raw
    .prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1")
    .get(table) as { pageno: number };
  raw.close();
  const fd = openSync(db, 'r+');
  writeSync(fd, Buffer.alloc(page_size, 0xa5), 0, page_size, (pageno - 1) * page_size);
  closeSync(fd);
}

function seedTodos(n = 30): void {
  const s = openStateStore({ dir });
  for (let i = 0; i < n; i++) s.todos.create('r', { title: `todo ${i} ${'x'.repeat(100)}` });
  s.close();
}

describe('a damaged state.db', () => {
  it('meeting a bad page stops every connection of the process, and the WAL is not copied into the file', () => {
    seedTodos();
    const writer = openStateStore({ dir });
    const job = writer.jobs.create('r', { todo_id: 't' }); // committed, and only in the WAL
    damage('todos'); // a page no connection has cached since
    const before = files();
    expect(before.wal).not.toBe('absent');

    const reader = openStateStore({ dir });
    let err: unknown;
    try {
      reader.todos.list('r');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoreDamagedError);
    expect((err as StoreDamagedError).exitCode).toBe(3);
    expect((err as Error).message).toMatch(/is damaged: .*SQLITE_CORRUPT/);
    // The other connection of this process stopped too: no write gets through.
    expect(() => writer.jobs.setStage(job.id, 'testing')).toThrow(StoreDamagedError);
    expect(() => writer.todos.create('r', { title: 'after' })).toThrow(StoreDamagedError);
    reader.close();
    writer.close();
    expect(files()).toEqual(before);
    // The job is still in the WAL, for a recovery to find.
    const raw = new DatabaseSync(db, { readOnly: true });
    expect(raw.prepare('SELECT id FROM jobs').all()).toEqual([{ id: job.id }]);
    raw.close();
  });

  it('a note left by another process stops an open store before its next call, and its close writes nothing', () => {
    seedTodos(3);
    const s = openStateStore({ dir });
    s.jobs.create('r', { todo_id: 't' });
    const before = files();
    // What another process leaves when it finds the file damaged.
    writeFileSync(`${db}-damaged`, JSON.stringify({ found_at: 'then', what: 'a bad page', file: null }));
    expect(() => s.todos.list('r')).toThrow(/is damaged: a bad page\.\nIt was found damaged at then/);
    s.close();
    expect(files()).toEqual(before);
  });

  it('a later open is refused before SQLite opens the file; a note about a file since replaced is dropped', () => {
    seedTodos();
    damage('todos');
    const s = openStateStore({ dir });
    expect(() => s.todos.list('r')).toThrow(StoreDamagedError);
    s.close();
    expect(existsSync(`${db}-damaged`)).toBe(true);
    const before = files();
    expect(() => openStateStore({ dir })).toThrow(/nothing has been written to it since/);
    expect(files()).toEqual(before);
    // Moved aside (the db alone, as a user might): a fresh store, the stale note gone.
    renameSync(db, join(tmp.path, 'aside.db'));
    const fresh = openStateStore({ dir });
    expect(fresh.todos.create('r', { title: 'fresh' }).title).toBe('fresh');
    fresh.close();
    expect(existsSync(`${db}-damaged`)).toBe(false);
  });

  it('knows SQLite’s corruption codes, extended ones included', () => {
    const sqliteError = (errcode: number) =>
      Object.assign(new Error('x'), { code: 'ERR_SQLITE_ERROR', errcode });
    expect(isCorruption(sqliteError(11))).toBe(true);
    expect(isCorruption(sqliteError(11 | (1 << 8)))).toBe(true); // SQLITE_CORRUPT_VTAB
    expect(isCorruption(sqliteError(26))).toBe(true);
    expect(isCorruption(sqliteError(5))).toBe(false);
    expect(isCorruption(new Error('database disk image is malformed'))).toBe(false);
  });
});
