// The store's LISTEN connection across losses (PgDb.listenTo): one
// connection listens at a time, and stopping leaves none behind, even in the
// middle of a reconnect. A connection left behind delivers each notice twice
// (the board reloads twice) and keeps the process from exiting (`ii job logs
// -f` stopped by the user, a board quitting, a runner at its job's end).
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PgDb } from '../../src/state/pg/db.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { waitFor } from '../helpers/tmp.js';

const server = pgServer();
const CHANNEL = 'ii_test_listen';

describe.skipIf(!server)(`the store's LISTEN connection${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  const db = usePgDatabase();
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c().catch(() => {});
  });

  const listeners = async (): Promise<number> =>
    Number(
      (
        await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'incrementum-listen'",
        )
      )[0]!.n,
    );

  it('a reconnect whose catch-up read fails ends that connection before the next: one listens, notices come once', async () => {
    const pg = new PgDb(db.url);
    closing.push(() => pg.close());
    let backs = 0;
    const got: string[] = [];
    const stop = await pg.listenTo(
      CHANNEL,
      (p) => got.push(p),
      async () => {
        backs++;
        if (backs === 1) throw new Error('the catch-up read failed');
      },
    );
    closing.push(stop);
    expect(await listeners()).toBe(1);
    expect(db.terminate('incrementum-listen')).toBe(1);
    await waitFor(() => backs >= 2, 'the second reconnect', 30_000);
    await waitFor(async () => (await listeners()) === 1, 'one listening connection');
    // Each notice once: two listening connections would give each twice.
    await db.query(`SELECT pg_notify('${CHANNEL}', 'a'), pg_notify('${CHANNEL}', 'b')`);
    await db.query(`SELECT pg_notify('${CHANNEL}', 'end')`);
    await waitFor(() => got.includes('end'), 'the notices');
    expect(got).toEqual(['a', 'b', 'end']);
    await stop();
    await waitFor(async () => (await listeners()) === 0, 'no listening connection after stop', 5000);
  });

  describe('stopped while a reconnect is under way', () => {
    let proxy: Server | null = null;
    const open = new Set<Socket>();
    afterEach(async () => {
      for (const s of open) s.destroy();
      await new Promise((r) => (proxy ? proxy.close(r) : r(null)));
      proxy = null;
    });

    it('ends the connection being made: none is left open', async () => {
      // A loopback proxy in front of the server: it drops the listening
      // connection and holds the next one unanswered, so stop comes while the
      // reconnect waits on it, every time.
      const held: Socket[] = [];
      let hold = false;
      proxy = createServer((sock) => {
        open.add(sock);
        sock.on('close', () => open.delete(sock));
        sock.on('error', () => {});
        if (hold) {
          // Read and never answer: the client's close is seen, its startup never replied to.
          sock.resume();
          return void held.push(sock);
        }
        const up = netConnect(server!.port, '127.0.0.1');
        up.on('error', () => sock.destroy());
        up.on('close', () => sock.destroy());
        sock.on('close', () => up.destroy());
        sock.pipe(up).pipe(sock);
      });
      await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', () => r()));
      const port = (proxy.address() as { port: number }).port;
      const url = `postgres://${server!.passwordUser}:${encodeURIComponent(server!.password)}@127.0.0.1:${port}/${db.name}`;
      const pg = new PgDb(url);
      closing.push(() => pg.close());
      let backs = 0;
      const stop = await pg.listenTo(
        CHANNEL,
        () => {},
        async () => void backs++,
      );
      closing.push(stop);
      expect(open.size).toBe(1);
      hold = true;
      for (const s of open) s.destroy();
      await waitFor(() => held.length === 1, 'the reconnect reaching the proxy', 30_000);
      await stop();
      await waitFor(() => open.size === 0, 'the connection being made closed by stop', 5000);
      expect(backs).toBe(0);
    });
  });
});
