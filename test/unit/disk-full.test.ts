// What a full disk becomes (src/errors.ts asDiskFull, the store's guard): the
// path the error names and a message that says to free space, never damage
// or an internal error. SQLite's own SQLITE_FULL is real here: a database
// capped with max_page_count answers "database or disk is full" as on a full disk.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asDiskFull, DiskFullError } from '../../src/errors.js';
import { openDatabase } from '../../src/state/sqlite/db.js';
import { damageNoteFile } from '../../src/state/sqlite/damage.js';
import { GuardedConnection } from '../../src/state/sqlite/guard.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir('ii-diskfull-unit-')));
afterEach(() => tmp.cleanup());

const errno = (code: string, path?: string) =>
  Object.assign(new Error(`${code}: no space left on device, open '${path ?? ''}'`), {
    code,
    ...(path ? { path } : {}),
  });

describe('asDiskFull', () => {
  it('takes the path of a Node ENOSPC or EDQUOT error', () => {
    expect(asDiskFull(errno('ENOSPC', '/s/jobs/1/events.jsonl'))?.path).toBe('/s/jobs/1/events.jsonl');
    expect(asDiskFull(errno('EDQUOT', '/home/u/x'))?.path).toBe('/home/u/x');
  });

  it('reads the path from git’s or an agent’s message, else takes the fallback', () => {
    const git = new Error(
      "git worktree add failed in /r: fatal: could not create leading directories of '/s/workspaces/r/1/.git': No space left on device",
    );
    expect(asDiskFull(git, '/s/workspaces')?.path).toBe('/s/workspaces/r/1/.git');
    const agent = new Error("Internal error: ENOSPC: no space left on device, open '/ws/1/f.txt'");
    expect(asDiskFull(agent, '/ws/1')?.path).toBe('/ws/1/f.txt');
    expect(asDiskFull(new Error('write failed: No space left on device'), '/ws/1')?.path).toBe('/ws/1');
    // A DiskFullError's message wrapped into another error keeps its path.
    const wrapped = new Error(`could not land: ${new DiskFullError('/s/state.db').message}`);
    expect(asDiskFull(wrapped)?.path).toBe('/s/state.db');
  });

  it('is null for any other error', () => {
    expect(asDiskFull(new Error('EACCES: permission denied'))).toBeNull();
    expect(asDiskFull('no space left on device')).toBeNull();
    expect(asDiskFull(null)).toBeNull();
  });

  it('says what is full and what to do; a job records the same', () => {
    const e = new DiskFullError('/s/incrementum/state.db', 'The change was not made.');
    expect(e.exitCode).toBe(3);
    expect(e.message).toBe(
      'disk full: /s/incrementum/state.db\nThe change was not made.\n' +
        'Free space on the filesystem holding /s/incrementum (df -h /s/incrementum shows what is left), then run the command again.',
    );
    expect(e.jobReason).toMatch(
      /^disk full: \/s\/incrementum\/state\.db\nFree space on .*then retry the job\.$/,
    );
  });
});

describe('the store’s guard', () => {
  it('turns SQLITE_FULL into DiskFullError naming state.db, and declares no damage', () => {
    const path = join(tmp.path, 'state.db');
    const db = openDatabase(path);
    const guard = new GuardedConnection(db, path);
    try {
      db.exec('CREATE TABLE filler (b BLOB)');
      const { page_count } = db.prepare('PRAGMA page_count').get() as { page_count: number };
      db.exec(`PRAGMA max_page_count = ${page_count + 2}`);
      let thrown: unknown;
      try {
        guard.run(() => {
          for (let i = 0; i < 100; i++) db.prepare('INSERT INTO filler VALUES (?)').run(Buffer.alloc(4096));
        });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(DiskFullError);
      expect((thrown as DiskFullError).path).toBe(path);
      expect((thrown as DiskFullError).message).toContain('could not be written');
      expect(existsSync(damageNoteFile(path))).toBe(false);
      // The connection goes on: a smaller write still fits.
      expect(guard.run(() => db.prepare('SELECT count(*) AS n FROM filler').get())).toBeDefined();
    } finally {
      guard.close();
    }
  });
});
