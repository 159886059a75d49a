// Copies a whole store between the drivers (the heart of a future
// `ii state migrate --to postgres://…` and `--to sqlite`): every row of every
// table, as it is, since the two schemas are the same at the same version
// (test/unit/pg-schema.test.ts). The destination must be empty, the source is
// only read, and the copy is checked by counting each table's rows on both
// sides; the destination's write is one transaction, so a failed copy
// leaves it empty.
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import type pg from 'pg';
import { UserError } from '../../errors.js';
import { openDatabase } from '../sqlite/db.js';
import { CHANNEL, PgDb } from './db.js';

/** Each table's row count, as copied (the same on both sides). */
export type CopyReport = Record<string, number>;

export interface CopyOptions {
  /**
   * Repository names to change on the way (old → new): a repository's name on
   * SQLite is its clone's path, on a shared store what its clones share
   * (state/identity.ts). Rows of every table with a repo column follow; a
   * job's listing text, which holds its repo, is made again.
   */
  rekey?: Readonly<Record<string, string>>;
  /**
   * Workspace folders moved on the way (old path → new), to follow their
   * repository's new name (state/migrate.ts): the workspace's own record and
   * every column that names it (a job's, a session's, a process group's).
   */
  paths?: Readonly<Record<string, string>>;
}

/** The columns that hold a workspace's path. */
const PATH_COLUMNS: Readonly<Record<string, string>> = {
  workspaces: 'path',
  jobs: 'workspace_path',
  sessions: 'workspace_path',
  process_groups: 'workspace_path',
};

/** `row` with its workspace path moved by `paths`. */
function moved<R extends Record<string, unknown>>(table: string, row: R, paths: CopyOptions['paths']): R {
  const col = PATH_COLUMNS[table];
  const v = col ? row[col] : undefined;
  if (!paths || !col || typeof v !== 'string' || !Object.hasOwn(paths, v)) return row;
  return { ...row, [col]: paths[v] };
}

/** `row` with its repo renamed by `rekey` (and, for a job, its listing text dropped to be made again) and its workspace path moved. */
function rekeyed<R extends Record<string, unknown>>(table: string, row: R, opts: CopyOptions): R {
  const r = moved(table, row, opts.paths);
  if (!opts.rekey || typeof r.repo !== 'string') return r;
  const to = opts.rekey[r.repo];
  if (to === undefined || to === r.repo) return r;
  return { ...r, repo: to, ...(table === 'jobs' && 'list_json' in r ? { list_json: null } : {}) };
}

/** Tables in the order they are copied: all of SQLite's but its own. */
function tablesOf(lite: DatabaseSync): string[] {
  return (
    lite
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all() as { name: string }[]
  ).map((r) => r.name);
}

/** Tables whose id PostgreSQL numbers itself (an identity): its counter follows the copied ids. */
const IDENTITY = ['control_requests', 'permission_asks', 'process_groups', 'runners'];

/** Rows per INSERT: PostgreSQL takes at most 65,535 parameters in one statement. */
const batchOf = (cols: number): number => Math.max(1, Math.floor(30_000 / cols));

async function refuseUnlessEmptyPg(client: pg.PoolClient, where: string, tables: string[]): Promise<void> {
  const r = (await client.query('SELECT (SELECT count(*) FROM todos) + (SELECT count(*) FROM jobs) AS n'))
    .rows[0] as {
    n: number;
  };
  if (r.n > 0)
    throw new UserError(
      `${where} already holds todos or jobs: a copy goes only into an empty store, so nothing there is overwritten. Nothing was changed.`,
    );
  // Rows of the other tables: the copied ids would collide with them. Not
  // runners' records: an ii run on another machine waiting on the empty
  // backlog registers itself (and one killed leaves its record), and the
  // copied ones take new ids beside them (nothing refers to a runner's id).
  const held: string[] = [];
  for (const t of tables)
    if (
      t !== 'meta' &&
      !RENUMBERED.has(t) &&
      (await client.query(`SELECT EXISTS (SELECT 1 FROM ${t}) AS any`)).rows[0]?.any
    )
      held.push(t);
  if (held.length > 0)
    throw new UserError(
      `${where} has no todos or jobs but already holds rows of ${held.join(', ')}: a copy goes only into an empty store, so nothing there is overwritten. Nothing was changed.`,
    );
}

/** Tables whose rows are copied with new ids (the destination may hold some already). */
const RENUMBERED = new Set(['runners']);

/** Copies the SQLite store at `dbPath` into the PostgreSQL database at `url` (migrated first; must be empty). */
export async function copySqliteToPg(
  dbPath: string,
  url: string,
  opts: CopyOptions = {},
): Promise<CopyReport> {
  const lite = openDatabase(dbPath);
  const db = new PgDb(url);
  try {
    await db.migrate();
    const report: CopyReport = {};
    return await db.inTransaction('BEGIN', async (client) => {
      const tables = tablesOf(lite);
      await refuseUnlessEmptyPg(client, `PostgreSQL state database ${db.location}`, tables);
      // The store's version before the copy: boards and runners already on it read what changed after it.
      const before = Number(
        (
          (await client.query("SELECT value FROM meta WHERE key = 'version'")).rows[0] as
            { value: number } | undefined
        )?.value ?? 0,
      );
      let copiedVersion = 0;
      const runnersBefore = Number(
        ((await client.query('SELECT count(*) AS n FROM runners')).rows[0] as { n: number }).n,
      );
      for (const t of tables) {
        const rows = (lite.prepare(`SELECT * FROM ${t}`).all() as Record<string, SQLInputValue>[]).map((r) =>
          rekeyed(t, r, opts),
        );
        report[t] = rows.length;
        if (t === 'meta') {
          // The store's version only: the schema's is the destination's own.
          for (const r of rows) if (r.key === 'version') copiedVersion = Number(r.value);
          continue;
        }
        if (rows.length === 0) continue;
        const cols = Object.keys(rows[0]!).filter((c) => !(RENUMBERED.has(t) && c === 'id'));
        const batch = batchOf(cols.length);
        for (let i = 0; i < rows.length; i += batch) {
          const params: unknown[] = [];
          const values = rows.slice(i, i + batch).map(
            (r) =>
              `(${cols
                .map((c) => {
                  const v = r[c];
                  params.push(typeof v === 'bigint' ? Number(v) : v);
                  return `$${params.length}`;
                })
                .join(', ')})`,
          );
          await client.query(
            `INSERT INTO ${t} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES ${values.join(', ')}`,
            params,
          );
        }
        if (IDENTITY.includes(t) && !RENUMBERED.has(t))
          await client.query(
            `SELECT setval(pg_get_serial_sequence('${t}', 'id'), COALESCE((SELECT MAX(id) FROM ${t}), 0) + 1, false)`,
          );
      }
      for (const [t, n] of Object.entries(report)) {
        if (t === 'meta') continue;
        const got = (await client.query(`SELECT count(*) AS n FROM ${t}`)).rows[0] as { n: number };
        if (got.n !== n + (t === 'runners' ? runnersBefore : 0))
          throw new Error(`copy check: ${t} has ${got.n} rows in PostgreSQL, ${n} in SQLite`);
      }
      // Never back: a version at or below one a reader saw would hide the
      // copied rows from it (and every write after them until the count
      // passed it again). The copied todos and jobs are stamped past both,
      // and the watchers told, as a write transaction does (db.ts).
      const v = Math.max(before, copiedVersion) + 1;
      await client.query("UPDATE meta SET value = $1 WHERE key = 'version'", [v]);
      await client.query('UPDATE todos SET changed_version = $1', [v]);
      await client.query('UPDATE jobs SET changed_version = $1', [v]);
      await client.query('SELECT pg_notify($1, $2)', [CHANNEL, String(v)]);
      return report;
    });
  } finally {
    lite.close();
    await db.close();
  }
}

/** Copies the PostgreSQL store at `url` into the SQLite store at `dbPath` (made or migrated; must be empty). */
export async function copyPgToSqlite(
  url: string,
  dbPath: string,
  opts: CopyOptions = {},
): Promise<CopyReport> {
  const db = new PgDb(url);
  const lite = openDatabase(dbPath);
  try {
    await db.migrate();
    const n = lite
      .prepare('SELECT (SELECT count(*) FROM todos) + (SELECT count(*) FROM jobs) AS n')
      .get() as { n: number };
    if (n.n > 0)
      throw new UserError(
        `state database ${dbPath} already holds todos or jobs: a copy goes only into an empty store, so nothing there is overwritten. Nothing was changed.`,
      );
    const report: CopyReport = {};
    const tables = tablesOf(lite);
    // Read first, outside SQLite's write lock; one repeatable snapshot of the server's store.
    const data = new Map<string, Record<string, unknown>[]>();
    await db.inTransaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', async (client) => {
      for (const t of tables)
        data.set(
          t,
          ((await client.query(`SELECT * FROM ${t}`)).rows as Record<string, unknown>[]).map((r) =>
            rekeyed(t, r, opts),
          ),
        );
    });
    lite.exec('BEGIN IMMEDIATE');
    try {
      const before = Number(
        (lite.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: number }).value,
      );
      let copiedVersion = 0;
      for (const t of tables) {
        const rows = data.get(t) ?? [];
        report[t] = rows.length;
        if (t === 'meta') {
          for (const r of rows) if (r.key === 'version') copiedVersion = Number(r.value);
          continue;
        }
        if (rows.length === 0) continue;
        const cols = Object.keys(rows[0]!);
        const insert = lite.prepare(
          `INSERT INTO ${t} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
        );
        for (const r of rows) insert.run(...cols.map((c) => r[c] as SQLInputValue));
      }
      for (const [t, count] of Object.entries(report)) {
        if (t === 'meta') continue;
        const got = lite.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number };
        if (got.n !== count)
          throw new Error(`copy check: ${t} has ${got.n} rows in SQLite, ${count} in PostgreSQL`);
      }
      // Never back, as into PostgreSQL above: the empty store's version (its
      // runners' heartbeats move it) may be past the server's, and a reader
      // that saw it (a board, ii run) reads only rows stamped after it.
      const v = Math.max(before, copiedVersion) + 1;
      lite.prepare("UPDATE meta SET value = ? WHERE key = 'version'").run(v);
      lite.prepare('UPDATE todos SET changed_version = ?').run(v);
      lite.prepare('UPDATE jobs SET changed_version = ?').run(v);
      lite.exec('COMMIT');
      return report;
    } catch (err) {
      lite.exec('ROLLBACK');
      throw err;
    }
  } finally {
    lite.close();
    await db.close();
  }
}
