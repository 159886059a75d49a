// The PostgreSQL driver when the server ends its sessions (an administrator,
// a restart, a failover): reads go on over a new connection, and a write
// transaction cut before COMMIT runs again whole (the server rolled it back),
// so a claim cut in the middle is made once, never twice, never half.
import { execFileSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimRefusal } from '../../src/model/backlog.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { openPgStore } from '../../src/state/pg/index.js';
import { dropDatabase, freshDatabase, pgServer, pgWhyNot, socketUrl } from '../helpers/pg.js';

const server = pgServer();

describe.skipIf(!server)(`a lost connection${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  let db = '';
  let store: AsyncStateStore;
  beforeEach(async () => {
    db = await freshDatabase(server!);
    store = await openPgStore(socketUrl(server!, db));
  });
  afterEach(async () => {
    await store?.close();
    await dropDatabase(server!, db);
  });

  /** Ends every session on the test database but psql's own, synchronously (psql, as an administrator would). */
  const terminateAll = (): string =>
    execFileSync(
      'psql',
      [
        '-h',
        server!.socketDir,
        '-p',
        String(server!.port),
        '-U',
        server!.user,
        '-d',
        'postgres',
        '-Atc',
        `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '${db}' AND pid <> pg_backend_pid()`,
      ],
      { encoding: 'utf8' },
    ).trim();

  it('reads and writes go on after the server ended every session', async () => {
    const t = await store.todos.create('r', { title: 'before' });
    expect(Number(terminateAll())).toBeGreaterThan(0);
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
      if (calls++ === 0) expect(Number(terminateAll())).toBeGreaterThan(0);
      return claimRefusal(t.id, todos, jobs, { mode: 'ready', maxAttempts: 2 });
    });
    expect(calls).toBe(2);
    expect(await store.jobs.list('r')).toEqual([await store.jobs.get(job.id)]);
    expect((await store.todos.get('r', t.id))?.status).toBe('in_progress');
  });
});
