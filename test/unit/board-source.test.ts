// The board's copy of a store (dashboard/io/board-source.ts StoreMirror),
// here over the SQLite driver's asynchronous API (the PostgreSQL one is
// pg-dashboard.test.ts): it answers the board's reads as the store would,
// and refreshes run one at a time, those asked for meanwhile making one more.
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { StoreMirror } from '../../src/dashboard/io/board-source.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { openStateStore } from '../../src/state/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { tempDir } from '../helpers/tmp.js';

const REPO = 'r';
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function open() {
  const tmp = tempDir();
  cleanups.push(tmp.cleanup);
  const state = openStateStore({ dir: join(tmp.path, 'incrementum') });
  cleanups.push(() => state.close());
  return { state, store: asyncStore(state) };
}

/** The store with its version() calls counted: one per refresh that reads. */
function counted(store: AsyncStateStore): { store: AsyncStateStore; reads: () => number } {
  let n = 0;
  const jobs = { ...store.jobs, version: () => (n++, store.jobs.version()) };
  return { store: { ...store, jobs }, reads: () => n };
}

it('answers as the store does after each refresh, and only with what was read', async () => {
  const { state, store } = open();
  const t0 = state.todos.create(REPO, { title: 'first' });
  const j0 = state.jobs.claim(REPO, { todo_id: t0.id, pid: 1, host: 'b' }, () => null)!;
  let changes = 0;
  const m = new StoreMirror(store, REPO, () => changes++);
  cleanups.push(() => m.close());
  await m.load();
  expect(m.jobs.version()).toBe(state.jobs.version());
  expect(m.jobs.list(REPO).map((j) => j.id)).toEqual([j0.id]);
  expect(m.todos.get(REPO, t0.id)?.title).toBe('first');
  expect(m.todos.stamp(REPO).split('|')[0]).toBe(state.todos.stamp(REPO).split('|')[0]);
  const seen = m.jobs.version();

  const t1 = state.todos.create(REPO, { title: 'second' });
  state.jobs.setStage(j0.id, 'testing');
  // Not read yet: the copy is as it was.
  expect(m.jobs.get(j0.id)?.stage).toBe('implementing');
  await m.refresh();
  expect(changes).toBe(1);
  expect(m.jobs.get(j0.id)?.stage).toBe('testing');
  expect(m.jobs.listChangedAfter(seen, REPO).map((j) => j.id)).toEqual([j0.id]);
  expect(m.todos.listChangedAfter(REPO, seen).map((t) => t.id)).toEqual([t1.id]);
  expect(
    m.todos
      .list(REPO)
      .map((t) => t.id)
      .sort(),
  ).toEqual([t0.id, t1.id].sort());
  expect(m.jobs.briefs(REPO)).toEqual(state.jobs.briefs(REPO));
  // Another repository's todos are not all held: none are listed.
  expect(m.todos.list('other')).toEqual([]);
  // Nothing new: no change is announced.
  await m.refresh();
  expect(changes).toBe(1);
});

it('runs one refresh at a time: those asked for during one make a single one after it', async () => {
  const { state, store } = open();
  state.todos.create(REPO, { title: 'first' });
  const c = counted(store);
  const m = new StoreMirror(c.store, REPO);
  cleanups.push(() => m.close());
  await m.load();
  const before = c.reads();
  state.todos.create(REPO, { title: 'second' });
  const all = [m.refresh(), m.refresh(), m.refresh(), m.refresh()];
  await Promise.all(all);
  // The first, and one more for the three asked for while it ran.
  expect(c.reads() - before).toBe(2);
  expect(m.todos.list(REPO)).toHaveLength(2);
});

it('reads notices that come within the gap after a read together, in one read, and takes their version as the store’s', async () => {
  const { state, store } = open();
  state.todos.create(REPO, { title: 'first' });
  const c = counted(store);
  let changes = 0;
  const m = new StoreMirror(c.store, REPO, () => changes++, undefined, 60_000);
  cleanups.push(() => m.close());
  await m.load();
  state.todos.create(REPO, { title: 'second' });
  // A notice after a quiet spell is read at once, with the notice's version (no version read).
  const before = c.reads();
  await m.refresh(state.jobs.version());
  expect(changes).toBe(1);
  expect(c.reads()).toBe(before);
  expect(m.jobs.version()).toBe(state.jobs.version());
  // Three notices in the gap after it: held, then read together.
  const held: Promise<void>[] = [];
  for (let i = 0; i < 3; i++) {
    state.todos.create(REPO, { title: `burst ${i}` });
    held.push(m.refresh(state.jobs.version()));
    await new Promise((r) => setImmediate(r));
  }
  expect(changes).toBe(1);
  expect(m.todos.list(REPO)).toHaveLength(2);
  // The board's own write is read at once, with the store's version asked for.
  await m.refresh();
  expect(changes).toBe(2);
  expect(c.reads()).toBe(before + 1);
  expect(m.todos.list(REPO)).toHaveLength(5);
  await Promise.all(held);
  expect(changes).toBe(2);
});

it("holds the repository's job briefs as the store gives them, reading whole only at its load, then only the jobs written since", async () => {
  const { state, store } = open();
  const asked: string[] = [];
  const jobs = {
    ...store.jobs,
    briefs: (repo: string) => (asked.push('whole'), store.jobs.briefs(repo)),
    briefsChangedAfter: async (repo: string, after: number) => {
      const rows = await store.jobs.briefsChangedAfter(repo, after);
      asked.push(`changed ${rows.length}`);
      return rows;
    },
  };
  const m = new StoreMirror({ ...store, jobs }, REPO);
  cleanups.push(() => m.close());
  const ids = (rows: readonly { id: string }[]) => rows.map((r) => r.id).sort();
  const briefsById = (rows: readonly { id: string }[]) => [...rows].sort((a, b) => a.id.localeCompare(b.id));
  const a = state.todos.create(REPO, { title: 'a' });
  const b = state.todos.create(REPO, { title: 'b' });
  const ja = state.jobs.claim(REPO, { todo_id: a.id, pid: 1, host: 'h' }, () => null)!;
  // Never written again: in no read after the first.
  const c = state.todos.create(REPO, { title: 'c' });
  const jc = state.jobs.claim(REPO, { todo_id: c.id, pid: 4, host: 'h' }, () => null)!;
  await m.load();
  const jb = state.jobs.claim(REPO, { todo_id: b.id, pid: 2, host: 'h' }, () => null)!;
  await m.refresh();
  expect(ids(m.jobs.briefs(REPO))).toEqual([ja.id, jb.id, jc.id].sort());
  // A commit changes a brief's derived fields; a heartbeat its beat.
  state.jobs.appendChange(ja.id, 'ch1');
  state.jobs.appendCommit(ja.id, { commit_id: 'c1' });
  state.jobs.heartbeat(jb.id, 3, 'h2');
  await m.refresh();
  expect(briefsById(m.jobs.briefs(REPO))).toEqual(briefsById(state.jobs.briefs(REPO)));
  expect(m.jobs.briefs(REPO).find((j) => j.id === ja.id)).toMatchObject({ iteration: 1, committed: true });
  // A todo alone changes no brief, and asks for none.
  state.todos.create(REPO, { title: 'c' });
  await m.refresh();
  // Whole once; then the new job alone, then the two written, never the third.
  expect(asked).toEqual(['whole', 'changed 1', 'changed 2']);
});
