// One database of the run's private PostgreSQL server for a test file or for
// each of its tests: made before, dropped after (the stores opened through it
// closed first), with the URLs to reach it and the administrator's ways in
// (a query on a connection of its own; ending its sessions, as a restart or
// an administrator would). Where there is no server the hooks do nothing: the
// suite is skipped (`pgServer()` is null, `pgWhyNot()` says why).
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { openPgStore } from '../../src/state/pg/index.js';
import { dropDatabase, freshDatabase, passwordUrl, pgServer, socketUrl } from './pg.js';

export interface TestDatabase {
  /** Its name (made by the before hook). */
  readonly name: string;
  /** Over the Unix socket, as the trusted test user. */
  readonly url: string;
  /** Over loopback TCP with the password, as another machine reaches the server. */
  readonly passwordUrl: string;
  /** A store on it (over TCP with a password when asked), closed before the database is dropped. */
  open(opts?: { dir?: string; password?: boolean }): Promise<AsyncStateStore>;
  /** The rows of one query, on a connection of its own. */
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * Ends its sessions, synchronously (psql, so it can run inside a store's
   * synchronous callback): every one but psql's own, or only those of the
   * given application_name. How many it ended.
   */
  terminate(application?: string): number;
}

/**
 * Registers the hooks, in the describe it is called in (or the file): `each`
 * (the default) makes a database per test, `file` one for them all.
 */
export function usePgDatabase(opts: { scope?: 'each' | 'file'; prefix?: string } = {}): TestDatabase {
  const server = pgServer();
  let name = '';
  const opened: AsyncStateStore[] = [];
  const need = () => {
    if (!server || !name) throw new Error('usePgDatabase: no database (no server, or used outside a test)');
    return server;
  };
  const db: TestDatabase = {
    get name() {
      return name;
    },
    get url() {
      return socketUrl(need(), name);
    },
    get passwordUrl() {
      return passwordUrl(need(), name);
    },
    async open(o = {}) {
      const store = await openPgStore(o.password ? db.passwordUrl : db.url, o.dir ? { dir: o.dir } : {});
      opened.push(store);
      return store;
    },
    async query<T>(sql: string, params: unknown[] = []) {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        return (await c.query(sql, params)).rows as T[];
      } finally {
        await c.end();
      }
    },
    terminate(application) {
      const s = need();
      // Names are ours (freshDatabase's hex) and the application's a literal of the test.
      const which = application ? `application_name = '${application}'` : 'pid <> pg_backend_pid()';
      const sql = `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '${name}' AND ${which}`;
      const args = ['-h', s.socketDir, '-p', String(s.port), '-U', s.user, '-d', 'postgres', '-Atc', sql];
      return Number(execFileSync('psql', args, { encoding: 'utf8' }).trim());
    },
  };
  const make = async () => {
    if (server) name = await freshDatabase(server, opts.prefix);
  };
  const drop = async () => {
    // A test that closed one itself is not an error here (the pool ends once).
    for (const s of opened.splice(0)) await s.close().catch(() => {});
    if (server && name) await dropDatabase(server, name);
    name = '';
  };
  if (opts.scope === 'file') {
    beforeAll(make);
    afterAll(drop);
  } else {
    beforeEach(make);
    afterEach(drop);
  }
  return db;
}
