// The PostgreSQL schema is SQLite's: the same tables, columns (name, kind,
// NOT NULL) and indexes at the same version, so a store moves between the
// drivers as it is. A SQLite migration added without its PostgreSQL entry
// (src/state/pg/migrations.ts) fails here. And the schema's version rules:
// forward-only, a newer database refused untouched, a foreign one refused.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { openStateStore } from '../../src/state/index.js';
import { openPgStore } from '../../src/state/pg/index.js';
import { PG_SCHEMA_VERSION } from '../../src/state/pg/migrations.js';
import { SCHEMA_VERSION } from '../../src/state/sqlite/migrations.js';
import { dropDatabase, freshDatabase, pgServer, pgWhyNot, socketUrl } from '../helpers/pg.js';
import { tempDir } from '../helpers/tmp.js';

interface Shape {
  tables: Record<string, string[]>;
  indexes: string[];
}

/** SQLite's declared types by affinity, and PostgreSQL's, as one word each. */
const kind = (t: string): string => {
  const u = t.toUpperCase();
  if (/INT/.test(u)) return 'integer';
  if (/REAL|DOUBLE|FLOA/.test(u)) return 'real';
  if (/TEXT|CHAR/.test(u)) return 'text';
  return u;
};

function sqliteShape(): Shape {
  const tmp = tempDir();
  try {
    openStateStore({ dir: join(tmp.path, 'incrementum') }).close();
    const db = new DatabaseSync(join(tmp.path, 'incrementum', 'state.db'));
    const tables: Record<string, string[]> = {};
    const names = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all() as { name: string }[];
    for (const { name } of names) {
      const cols = db.prepare(`PRAGMA table_info(${name})`).all() as {
        name: string;
        type: string;
        notnull: number;
        pk: number;
      }[];
      tables[name] = cols
        .map((c) => `${c.name} ${kind(c.type)}${c.pk ? ' pk' : c.notnull ? ' not null' : ''}`)
        .sort();
    }
    const indexes = (
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name",
        )
        .all() as { name: string }[]
    ).map((r) => r.name);
    db.close();
    return { tables, indexes };
  } finally {
    tmp.cleanup();
  }
}

async function pgShape(url: string): Promise<Shape> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const cols = (
      await c.query(`
      SELECT c.table_name, c.column_name, c.data_type, c.is_nullable,
        EXISTS (SELECT 1 FROM information_schema.key_column_usage k JOIN information_schema.table_constraints tc
          ON tc.constraint_name = k.constraint_name AND tc.constraint_type = 'PRIMARY KEY'
          WHERE k.table_name = c.table_name AND k.column_name = c.column_name) AS pk
      FROM information_schema.columns c WHERE c.table_schema = 'public'`)
    ).rows as {
      table_name: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
      pk: boolean;
    }[];
    const tables: Record<string, string[]> = {};
    for (const r of cols)
      (tables[r.table_name] ??= []).push(
        `${r.column_name} ${kind(r.data_type)}${r.pk ? ' pk' : r.is_nullable === 'NO' ? ' not null' : ''}`,
      );
    for (const t of Object.values(tables)) t.sort();
    const indexes = (
      await c.query(
        `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key' ORDER BY indexname`,
      )
    ).rows.map((r: { indexname: string }) => r.indexname);
    return {
      tables: Object.fromEntries(Object.entries(tables).sort(([a], [b]) => a.localeCompare(b))),
      indexes,
    };
  } finally {
    await c.end();
  }
}

const server = pgServer();
describe.skipIf(!server)(`PostgreSQL schema${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  let db = '';
  let url = '';
  beforeAll(async () => {
    db = await freshDatabase(server!);
    url = socketUrl(server!, db);
    await (await openPgStore(url)).close();
  });
  afterAll(async () => {
    if (db) await dropDatabase(server!, db);
  });

  it('is at the SQLite schema version', () => {
    expect(PG_SCHEMA_VERSION).toBe(SCHEMA_VERSION);
  });

  it('has the same tables, columns (kind, NOT NULL, primary key) and indexes as SQLite', async () => {
    const lite = sqliteShape();
    const pgs = await pgShape(url);
    // A primary key column is shown as such, not as NOT NULL: PostgreSQL's
    // are never null, where SQLite lets a TEXT key be (nothing writes one).
    expect(Object.keys(pgs.tables).sort()).toEqual(Object.keys(lite.tables).sort());
    for (const t of Object.keys(lite.tables)) expect({ [t]: pgs.tables[t] }).toEqual({ [t]: lite.tables[t] });
    expect(pgs.indexes.sort()).toEqual(lite.indexes.sort());
  });

  it('opens again without migrating, and two processes opening an empty database at once both succeed', async () => {
    await (await openPgStore(url)).close();
    const other = await freshDatabase(server!);
    try {
      const u = socketUrl(server!, other);
      const stores = await Promise.all([openPgStore(u), openPgStore(u), openPgStore(u)]);
      for (const s of stores) await s.close();
    } finally {
      await dropDatabase(server!, other);
    }
  });

  it('refuses a database newer than this build, untouched, naming it without its password', async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query("UPDATE meta SET value = value + 1 WHERE key = 'schema_version'");
      const pwUrl = url.replace('postgres://ii@', 'postgres://ii:hunter2secret@');
      const err = await openPgStore(pwUrl).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).exitCode).toBe(3);
      expect((err as Error).message).toMatch(
        new RegExp(
          `schema version ${SCHEMA_VERSION + 1}, newer than this build of incrementum knows \\(${SCHEMA_VERSION}\\)`,
        ),
      );
      expect((err as Error).message).toContain('postgres://ii:[REDACTED]@');
      expect((err as Error).message).not.toContain('hunter2secret');
      const v = await c.query("SELECT value FROM meta WHERE key = 'schema_version'");
      expect(Number(v.rows[0].value)).toBe(SCHEMA_VERSION + 1);
    } finally {
      await c.query("UPDATE meta SET value = value - 1 WHERE key = 'schema_version'");
      await c.end();
    }
  });

  it('lists a job with no kept listing text (a row copied in) from its rows, as JSON.stringify(list())', async () => {
    const s = await openPgStore(url);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const t = await s.todos.create('lj', { title: 'T' });
      const j = await s.jobs.create('lj', { todo_id: t.id });
      await s.jobs.appendChange(j.id, 'ch');
      await s.jobs.appendCommit(j.id, { commit_id: 'c1', draft_message: 'm' });
      await s.jobs.create('lj', { todo_id: t.id });
      const kept = await s.jobs.listJson('lj');
      await c.query('UPDATE jobs SET list_json = NULL WHERE id = $1', [j.id]);
      expect(await s.jobs.listJson('lj')).toBe(kept);
      expect(kept).toBe(JSON.stringify(await s.jobs.list('lj')));
    } finally {
      await c.end();
      await s.close();
    }
  });

  it("refuses a database holding another program's meta table", async () => {
    const other = await freshDatabase(server!);
    const c = new pg.Client({ connectionString: socketUrl(server!, other) });
    await c.connect();
    try {
      await c.query('CREATE TABLE meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL)');
      await expect(openPgStore(socketUrl(server!, other))).rejects.toThrow(
        /a table named meta that is not incrementum's/,
      );
    } finally {
      await c.end();
      await dropDatabase(server!, other);
    }
  });
});
