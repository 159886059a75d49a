// A board on PostgreSQL quits at once, whatever its reads are waiting on:
// here the catch-up read of a reconnect (its LISTEN connection lost) waits on
// a lock another session holds on meta, for as long as that session likes.
// Quitting (the mirror's close, then the store's) used to wait for that read,
// the pool having no query timeout; now the read is cancelled on the server
// and its connection cut, and no session of the board's is left behind.
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreMirror } from '../../src/dashboard/io/board-source.js';
import { openPgStore } from '../../src/state/pg/index.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { waitFor } from '../helpers/tmp.js';

const server = pgServer();

describe.skipIf(!server)(`a board quitting on PostgreSQL${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  const db = usePgDatabase();

  const sessions = async (where: string): Promise<number> =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'incrementum%' AND ${where}`,
      )
    )[0]!.n;

  it('does not wait for a reconnect’s catch-up read stuck on a lock, and leaves no session behind', async () => {
    const store = await db.open();
    const mirror = new StoreMirror(store, 'r');
    await mirror.load();
    await mirror.watch();
    const locker = new pg.Client({ connectionString: db.url, application_name: 'locker' });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE meta IN ACCESS EXCLUSIVE MODE');
      // The board's LISTEN connection lost: the reconnect reads the version, and waits.
      expect(db.terminate('incrementum-listen')).toBe(1);
      await waitFor(
        async () => (await sessions("wait_event_type = 'Lock'")) > 0,
        'the catch-up read waiting on the lock',
        30_000,
      );
      let closed = false;
      void (async () => {
        await mirror.close();
        await store.close();
        closed = true;
      })();
      // The lock is still held: the quit cannot have waited for the read.
      await waitFor(() => closed, 'the board’s stores closed while the read still waits', 15_000);
      await waitFor(
        async () => (await sessions('true')) === 0,
        'no session of the board’s left on the server',
        15_000,
      );
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }
  }, 90_000);

  it('lets a write under way commit before it closes: a new todo typed just before quitting is kept', async () => {
    const store = await db.open();
    const locker = new pg.Client({ connectionString: db.url, application_name: 'locker' });
    await locker.connect();
    try {
      // The write waits on the store version's row, as it would behind a
      // slow server: it is in its transaction when the close comes.
      await locker.query('BEGIN');
      await locker.query("SELECT value FROM meta WHERE key = 'version' FOR UPDATE");
      const created = store.todos.create('r', { title: 'typed before quitting' });
      await waitFor(
        async () => (await sessions("wait_event_type = 'Lock'")) > 0,
        'the write waiting on the lock',
        30_000,
      );
      const closed = store.close();
      await locker.query('ROLLBACK');
      const todo = await created;
      await closed;
      const rows = await db.query<{ title: string }>('SELECT title FROM todos WHERE id = $1', [todo.id]);
      expect(rows.map((r) => r.title)).toEqual(['typed before quitting']);
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }
  }, 90_000);
});

describe.skipIf(!server)(
  `a board quitting on a PostgreSQL that stopped answering${server ? '' : ` (skipped: ${pgWhyNot()})`}`,
  () => {
    const db = usePgDatabase();
    let proxy: Server | null = null;
    const open = new Set<Socket>();
    afterEach(async () => {
      for (const s of open) s.destroy();
      await new Promise((r) => (proxy ? proxy.close(r) : r(null)));
      proxy = null;
    });

    it('closes its stores while a read waits on the silent server, and leaves no connection open', async () => {
      // A loopback proxy in front of the server that, once frozen, passes nothing
      // either way: a server stopped (SIGSTOP) or gone from the network.
      let frozen = false;
      proxy = createServer((sock) => {
        open.add(sock);
        sock.on('close', () => open.delete(sock));
        sock.on('error', () => {});
        const up = netConnect(server!.port, '127.0.0.1');
        up.on('error', () => sock.destroy());
        up.on('close', () => sock.destroy());
        sock.on('close', () => up.destroy());
        sock.on('data', (d) => void (frozen || up.write(d)));
        up.on('data', (d) => void (frozen || sock.write(d)));
      });
      await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', () => r()));
      const port = (proxy.address() as { port: number }).port;
      const store = await openPgStore(
        `postgres://${server!.passwordUser}:${encodeURIComponent(server!.password)}@127.0.0.1:${port}/${db.name}`,
      );
      const mirror = new StoreMirror(store, 'r');
      await mirror.load();
      await mirror.watch();
      expect(open.size).toBeGreaterThan(1); // the pool's and the LISTEN connection
      frozen = true;
      // A refresh that reads from the silent server, as a notice or a reconnect starts one.
      let read = false;
      void store.jobs.version().then(
        () => (read = true),
        () => (read = true),
      );
      await new Promise((r) => setImmediate(r));
      let closed = false;
      void (async () => {
        await mirror.close();
        await store.close();
        closed = true;
      })();
      await waitFor(() => closed, 'the stores closed while the server says nothing', 15_000);
      await waitFor(() => open.size === 0, 'no connection left open to the silent server', 15_000);
      expect(read).toBe(true); // failed, not left waiting
    }, 90_000);
  },
);
