// A write transaction on PostgreSQL ends by bumping meta's version row,
// which locks it until COMMIT: every other writer waits on that row. The
// bump, the stamps and COMMIT go to the server as one message, so a writer
// whose process or connection stalls after its bump (a runner at a high
// nice value waiting for a core, a slow link) never holds every other
// writer. Here the stall is a proxy that stops passing the writer's
// messages on once it has passed its bump. And opening a store whose schema
// is current takes no lock at all: only a migration takes the migration
// lock, so one process holding it (or stalled while holding it) holds no
// other process's start.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { MIGRATION_LOCK } from '../../src/state/pg/db.js';
import { openPgStore } from '../../src/state/pg/index.js';
import pg from 'pg';
import { passwordUrl, pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { waitFor } from '../helpers/tmp.js';

const server = pgServer();

/** A TCP proxy to the server that, once armed, holds what the client sends after a message naming meta's version row. */
async function stallingProxy(port: number) {
  const held: (() => void)[] = [];
  const sockets: Socket[] = [];
  const state = { armed: false, holding: false };
  const proxy: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    sockets.push(client, upstream);
    client.on('data', (chunk: Buffer) => {
      if (state.holding) return void held.push(() => upstream.write(chunk));
      upstream.write(chunk);
      if (state.armed && chunk.includes('UPDATE meta')) state.holding = true;
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const s of [client, upstream]) s.on('error', () => {});
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    port: (proxy.address() as { port: number }).port,
    state,
    release() {
      state.armed = false;
      state.holding = false;
      for (const f of held.splice(0)) f();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    },
  };
}

describe.skipIf(!server)(`the version row's lock${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  const db = usePgDatabase();
  let proxy: Awaited<ReturnType<typeof stallingProxy>>;
  let slow: AsyncStateStore;
  beforeEach(async () => {
    proxy = await stallingProxy(server!.port);
    slow = await openPgStore(passwordUrl(server!, db.name).replace(`:${server!.port}/`, `:${proxy.port}/`));
  });
  afterEach(async () => {
    proxy.release();
    await slow.close();
    await proxy.close();
  });

  it('is not held by a writer stalled after its bump: another writer commits meanwhile', async () => {
    const other = await db.open();
    await slow.todos.list('r'); // its connection made and authenticated before the stall is armed
    proxy.state.armed = true;
    const stalled = slow.todos.create('r', { title: 'from the stalled writer' });
    await waitFor(() => proxy.state.holding, 'the proxy to pass the bump and hold the rest');
    // Before, the stamps and COMMIT came in messages of their own after the
    // bump's answer: held back, with meta's row locked, this write waited.
    let timer: NodeJS.Timeout | undefined;
    const quick = await Promise.race([
      other.todos.create('r', { title: 'from another writer' }).then(() => 'committed'),
      new Promise((r) => (timer = setTimeout(r, 10_000, 'still waiting on the version row'))),
    ]);
    clearTimeout(timer);
    expect(quick).toBe('committed');
    proxy.release();
    await stalled;
    const titles = (await other.todos.list('r')).map((t) => t.title).sort();
    expect(titles).toEqual(['from another writer', 'from the stalled writer']);
  });
});

describe.skipIf(!server)(`opening a store${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  const db = usePgDatabase();

  it('with its schema current, does not wait on the migration lock another session holds', async () => {
    await (await db.open()).todos.create('r', { title: 'made before' }); // the schema made
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      let timer: NodeJS.Timeout | undefined;
      const opened = await Promise.race([
        db.open().then(async (s) => (await s.todos.list('r')).map((t) => t.title)),
        new Promise((r) => (timer = setTimeout(r, 10_000, 'still waiting on the migration lock'))),
      ]);
      clearTimeout(timer);
      expect(opened).toEqual(['made before']);
    } finally {
      await holder.end();
    }
  });
});
