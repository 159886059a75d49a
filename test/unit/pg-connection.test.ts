// The PostgreSQL driver when the server ends its sessions (an administrator,
// a restart, a failover): reads go on over a new connection, and a write
// transaction cut before COMMIT runs again whole (the server rolled it back),
// so a claim cut in the middle is made once, never twice, never half.
import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { claimRefusal } from '../../src/model/backlog.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { connectionLost, MIGRATION_LOCK, PgDb } from '../../src/state/pg/db.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { waitFor } from '../helpers/tmp.js';

const server = pgServer();

describe.skipIf(!server)(`a lost connection${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  const db = usePgDatabase();
  let store: AsyncStateStore;
  beforeEach(async () => {
    store = await db.open();
  });

  it('reads and writes go on after the server ended every session', async () => {
    const t = await store.todos.create('r', { title: 'before' });
    expect(db.terminate()).toBeGreaterThan(0);
    expect((await store.todos.list('r')).map((x) => x.id)).toEqual([t.id]);
    await store.todos.create('r', { title: 'after' });
    expect(await store.todos.list('r')).toHaveLength(2);
  });

  it('a claim whose session ends in the middle is made once, whole', async () => {
    const t = await store.todos.create('r', { title: 'T' });
    let calls = 0;
    const job = await store.jobs.claim('r', { todo_id: t.id, pid: 1, host: 'h' }, (todos, jobs) => {
      // The first time, the server ends the session between the claim's
      // check and its writes.
      if (calls++ === 0) expect(db.terminate()).toBeGreaterThan(0);
      return claimRefusal(t.id, todos, jobs, { mode: 'ready', maxAttempts: 2 });
    });
    expect(calls).toBe(2);
    expect(await store.jobs.list('r')).toEqual([await store.jobs.get(job.id)]);
    expect((await store.todos.get('r', t.id))?.status).toBe('in_progress');
  });
  it('a connection checked out hears its session ended between two queries: its next query fails, the process goes on, and the pool makes a new one', async () => {
    const other = new PgDb(db.url);
    try {
      const err = await other
        .withClient(async (c) => {
          await c.query('SELECT 1');
          const ended = new Promise((r) => c.once('end', r));
          expect(db.terminate('incrementum')).toBeGreaterThan(0);
          // The server's word comes while no query is out: before, it was an
          // unhandled 'error' event, which ended a runner mid-job.
          await ended;
          return c.query('SELECT 1');
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(connectionLost(err), String(err)).toBe(true);
      expect(await other.q('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await other.close();
    }
  });

  it("any connection checked out hears its session ended, not only withClient's and tx()'s: the process goes on", async () => {
    const other = new PgDb(db.url);
    try {
      // Straight from the pool, as logs.ts's pool.query and any later caller get one.
      const c = await other.pool.connect();
      await c.query('SELECT 1');
      const ended = new Promise((r) => c.once('end', r));
      expect(db.terminate('incrementum')).toBeGreaterThan(0);
      // Unheard, the server's word was an uncaught 'error' event: vitest fails the run with it.
      await ended;
      const err = await c.query('SELECT 1').then(
        () => null,
        (e: unknown) => e,
      );
      expect(connectionLost(err), String(err)).toBe(true);
      c.release(err as Error);
      expect(await other.q('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await other.close();
    }
  });

  it('a connection whose work threw inside a transaction is dropped, not given to the next caller', async () => {
    const other = new PgDb(db.url);
    try {
      const pidOf = async (c: pg.PoolClient) =>
        ((await c.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid;
      let first = 0;
      const err = await other
        .withClient(async (c) => {
          first = await pidOf(c);
          await c.query('BEGIN');
          throw new Error('work failed');
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(String(err)).toContain('work failed');
      // Given back, this idle connection (the pool's only one) would be the next caller's, its transaction open.
      const next = await other.withClient(async (c) => ({
        pid: await pidOf(c),
        inTx: ((await c.query('SELECT now() <> statement_timestamp() AS t')).rows[0] as { t: boolean }).t,
      }));
      expect(next.pid).not.toBe(first);
      expect(next.inTx).toBe(false);
    } finally {
      await other.close();
    }
  });

  it('a migration whose session ends while it waits for the migration lock is made all the same, on a new connection', async () => {
    // A database of its own, empty: the store above has migrated this one.
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const name = `${db.name}_m`;
    await admin.query(`CREATE DATABASE ${name}`);
    const url = db.url.replace(`/${db.name}`, `/${name}`);
    const holder = new pg.Client({ connectionString: url });
    const fresh = new PgDb(url);
    try {
      await holder.connect();
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const migrating = fresh.migrate();
      migrating.catch(() => {});
      const waiting = async () =>
        (
          await holder.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'incrementum' AND wait_event_type = 'Lock'",
          )
        ).rows;
      const [first] = await waitFor(
        async () => ((await waiting()).length ? await waiting() : null),
        'the migration waiting for its lock',
      );
      await holder.query('SELECT pg_terminate_backend($1)', [first!.pid]);
      await waitFor(
        async () => (await waiting()).some((r) => r.pid !== first!.pid),
        'the migration waiting again, on a new connection',
      );
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      await migrating;
      const tables = await holder.query("SELECT to_regclass('jobs') IS NOT NULL AS made");
      expect(tables.rows).toEqual([{ made: true }]);
    } finally {
      await holder.end().catch(() => {});
      await fresh.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
