// Live updates on PostgreSQL: a writer's commit reaches another connection's
// watcher through LISTEN/NOTIFY (no polling), and a watcher whose connection
// the server ended comes back and, reading what changed after the last
// version it saw, misses nothing written while it was away.
import { describe, expect, it } from 'vitest';
import type { Todo } from '../../src/model/todo.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { waitFor } from '../helpers/tmp.js';

const server = pgServer();

describe.skipIf(!server)(`watching the PostgreSQL store${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  const db = usePgDatabase();

  it("a dashboard's view follows every write, across a lost connection, with nothing missed", async () => {
    const writer = await db.open();
    const reader = await db.open();
    // A board's loop: on each notice, read the todos changed after the last version seen.
    const seen = new Map<string, Todo>();
    let last = await reader.jobs.version();
    let notices = 0;
    let reading = Promise.resolve();
    const stop = await reader.watch!(() => {
      notices++;
      reading = reading.then(async () => {
        const v = await reader.jobs.version();
        for (const t of await reader.todos.listChangedAfter('r', last)) seen.set(t.id, t);
        last = Math.max(last, v);
      });
    });
    const a = await writer.todos.create('r', { title: 'A' });
    await waitFor(() => seen.has(a.id), 'the first todo seen through a notice');
    expect(notices).toBeGreaterThan(0);

    // The server ends the watcher's session; writes go on meanwhile.
    const ended = db.terminate('incrementum-listen');
    expect(ended).toBe(1);
    const b = await writer.todos.create('r', { title: 'B, while away' });
    await writer.todos.setStatus('r', a.id, 'done');
    await waitFor(
      () => seen.has(b.id) && seen.get(a.id)?.status === 'done',
      'the writes made while away',
      30_000,
    );
    const c = await writer.todos.create('r', { title: 'C, after' });
    await waitFor(() => seen.has(c.id), 'a write after the reconnect');
    await stop();
    await reading;
  });
});
