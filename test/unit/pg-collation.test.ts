// Ids and repository names compared and ordered alike on both drivers, in a
// PostgreSQL database whose default collation is a language's (ICU en-US,
// as a database made on a machine with LANG=en_US.UTF-8 has), not the test
// server's C: SQLite compares text bytewise, and there case and punctuation
// sort otherwise ('B' before 'a', '-' before '_'). The same store (copied
// from SQLite as ii state migrate does) must list its jobs, find them by id
// prefix and list its workspaces in the same order on both.
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { openStateStore } from '../../src/state/index.js';
import { copySqliteToPg } from '../../src/state/pg/copy.js';
import { openPgStore } from '../../src/state/pg/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { dropDatabase, pgServer, pgWhyNot, socketUrl } from '../helpers/pg.js';
import { tempDir } from '../helpers/tmp.js';

const server = pgServer();
const IDS = ['job-B', 'job-a', 'job_a', 'jobA', 'job.a', 'JOB-a', 'job-a-2'];
const REPOS = ['a_b', 'a-b', 'A.b', 'ab', 'a-b-c'];
const bytewise = (xs: string[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe.skipIf(!server)(`ids in a language's collation${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  let tmp: ReturnType<typeof tempDir>;
  let db = '';
  const open: AsyncStateStore[] = [];
  beforeEach(() => {
    tmp = tempDir('ii-collation-');
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    if (db) await dropDatabase(server!, db);
    db = '';
    tmp.cleanup();
  });

  /** A database whose default collation is ICU en-US; null where the server has no ICU. */
  async function icuDatabase(): Promise<string | null> {
    const name = `ii_icu_${Math.random().toString(36).slice(2, 10)}`;
    const c = new pg.Client({
      host: server!.socketDir,
      port: server!.port,
      user: server!.user,
      database: 'postgres',
    });
    await c.connect();
    try {
      await c.query(
        `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`,
      );
      return name;
    } catch {
      return null;
    } finally {
      await c.end();
    }
  }

  it('list, prefix lookup and the workspace listing agree with SQLite', async (ctx) => {
    const name = await icuDatabase();
    if (!name) return ctx.skip();
    db = name;
    const url = socketUrl(server!, db);

    // On SQLite: jobs started at the same instant, told apart by id alone; workspaces of several repositories.
    const dir = join(tmp.path, 'state');
    const lite = openStateStore({ dir });
    const todo = lite.todos.create('r', { title: 't' });
    for (let i = 0; i < IDS.length; i++)
      lite.jobs.finish(lite.jobs.create('r', { todo_id: todo.id }).id, 'completed');
    for (const repo of REPOS)
      lite.workspaces.acquire(
        repo,
        `s-${repo}`,
        (n) => join(tmp.path, 'ws', repo, String(n)),
        (n) => `b${n}`,
      );
    lite.close();
    const raw = new DatabaseSync(join(dir, 'state.db'));
    const made = (raw.prepare('SELECT id FROM jobs ORDER BY rowid').all() as { id: string }[]).map(
      (r) => r.id,
    );
    const rename = raw.prepare(
      "UPDATE jobs SET id = ?, started_at = '2026-01-01T00:00:00.000Z', list_json = NULL WHERE id = ?",
    );
    made.forEach((id, i) => rename.run(IDS[i]!, id));
    raw.close();
    await copySqliteToPg(join(dir, 'state.db'), url);

    // The database does order these otherwise: without the fix below, the test could not fail.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const sorted = (await c.query('SELECT array_agg(v ORDER BY v) AS a FROM unnest($1::text[]) v', [IDS]))
        .rows[0] as { a: string[] };
      expect(sorted.a).not.toEqual(bytewise(IDS));
    } finally {
      await c.end();
    }

    const sqlite = asyncStore(openStateStore({ dir }));
    const pgs = await openPgStore(url);
    open.push(sqlite, pgs);
    for (const s of [sqlite, pgs]) {
      expect(
        (await s.jobs.list('r')).map((j) => j.id),
        s.driver,
      ).toEqual(bytewise(IDS));
      for (const id of IDS) expect((await s.jobs.get(id))?.id, s.driver).toBe(id);
      expect((await s.jobs.resolve('r', 'job_')).id, s.driver).toBe('job_a');
      expect((await s.jobs.resolve('r', 'job-a-')).id, s.driver).toBe('job-a-2');
      expect(
        (await s.workspaces.list()).map((w) => w.repo),
        s.driver,
      ).toEqual(bytewise(REPOS));
    }
  });
});
