// The PostgreSQL driver when the server ends its sessions (an administrator,
// a restart, a failover): reads go on over a new connection, and a write
// transaction cut before COMMIT runs again whole (the server rolled it back),
// so a claim cut in the middle is made once, never twice, never half.
import { beforeEach, describe, expect, it } from 'vitest';
import { claimRefusal } from '../../src/model/backlog.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';

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
});
