// The backlog's store side: edits refusing unknown deps and cycles, close and
// reopen, the claim transaction, and a store made by the schema before it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backlog, claimRefusal } from '../../src/model/backlog.js';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { migrate } from '../../src/state/sqlite/db.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
beforeEach(() => {
  tmp = tempDir();
  store = openStateStore({ dir: join(tmp.path, 'incrementum') });
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

const readyCheck =
  (id: string) => (todos: Parameters<typeof claimRefusal>[1], jobs: Parameters<typeof claimRefusal>[2]) =>
    claimRefusal(id, todos, jobs, { mode: 'ready', maxAttempts: 2 });

describe('todo edit', () => {
  it('changes only the fields given; deps by prefix', () => {
    const a = store.todos.create('r', { title: 'A' });
    const b = store.todos.create('r', { title: 'B', priority: 3, description: 'keep' });
    const e = store.todos.update('r', b.id.slice(0, 6), { title: 'B2', deps: [a.id.slice(0, 5)] });
    expect(e).toMatchObject({ id: b.id, title: 'B2', priority: 3, description: 'keep', deps: [a.id] });
    expect(store.todos.update('r', b.id, { deps: [] }).deps).toEqual([]);
  });

  it('refuses an unknown dep, itself, and a cycle (named), changing nothing', () => {
    const a = store.todos.create('r', { title: 'A' });
    const b = store.todos.create('r', { title: 'B', deps: [a.id] });
    const c = store.todos.create('r', { title: 'C', deps: [b.id] });
    expect(() => store.todos.update('r', a.id, { deps: ['zzzz'] })).toThrow(/no todo matches "zzzz"/);
    expect(() => store.todos.update('r', a.id, { deps: [a.id] })).toThrow(/cannot depend on itself/);
    expect(() => store.todos.update('r', a.id, { title: 'A2', deps: [c.id] })).toThrow(
      `cannot depend on ${c.id}: that would make a cycle, ${a.id} → ${c.id} → ${b.id} → ${a.id}`,
    );
    expect(store.todos.get('r', a.id)).toMatchObject({ title: 'A', deps: [] });
  });
});

describe('close and reopen', () => {
  it('close keeps a todo out of the backlog; reopen brings it back with a fresh count of attempts', () => {
    const a = store.todos.create('r', { title: 'A' });
    for (let i = 0; i < 2; i++) {
      const j = store.jobs.claim('r', { todo_id: a.id }, readyCheck(a.id));
      store.jobs.finish(j.id, 'failed', 'broken');
      store.todos.setStatus('r', a.id, 'open');
    }
    const plan = () => backlog(store.todos.list('r'), store.jobs.briefs('r'), { maxAttempts: 2 });
    expect(plan().ready).toEqual([]);
    expect(() => store.jobs.claim('r', { todo_id: a.id }, readyCheck(a.id))).toThrow(
      /failed 2 times; ii todo reopen/,
    );
    store.todos.close('r', a.id);
    expect(plan().blocked).toEqual([]);
    const again = store.todos.reopen('r', a.id);
    expect(again.status).toBe('open');
    expect(again.reopened_at).toEqual(expect.any(String));
    expect(plan().ready.map((t) => t.id)).toEqual([a.id]);
  });

  it('refuses while a job works on the todo', () => {
    const a = store.todos.create('r', { title: 'A' });
    const j = store.jobs.claim('r', { todo_id: a.id }, readyCheck(a.id));
    expect(() => store.todos.close('r', a.id)).toThrow(
      `job ${j.id} is working on it. Stop it first: ii job abandon ${j.id}`,
    );
    expect(() => store.todos.reopen('r', a.id)).toThrow(/is working on it/);
  });
});

describe('claim', () => {
  it('creates the job and marks the todo in progress at once; a second claim is refused', () => {
    const a = store.todos.create('r', { title: 'A' });
    const j = store.jobs.claim('r', { todo_id: a.id, pid: 1, host: 'h' }, readyCheck(a.id));
    expect(j).toMatchObject({ todo_id: a.id, status: 'active', pid: 1 });
    expect(store.todos.get('r', a.id)?.status).toBe('in_progress');
    expect(() => store.jobs.claim('r', { todo_id: a.id }, readyCheck(a.id))).toThrow(/already has a job, /);
    expect(store.jobs.list('r')).toHaveLength(1);
  });

  it('decides on the todo, its deps and their jobs only: a dep not done refuses, done lets it through', () => {
    const dep = store.todos.create('r', { title: 'dep' });
    const t = store.todos.create('r', { title: 'T', deps: [dep.id] });
    for (let i = 0; i < 5; i++) store.todos.create('r', { title: `other ${i}` });
    const other = store.todos.create('r', { title: 'other with a job' });
    store.jobs.claim('r', { todo_id: other.id }, readyCheck(other.id));
    const seen: string[][] = [];
    const check = (todos: Parameters<typeof claimRefusal>[1], jobs: Parameters<typeof claimRefusal>[2]) => {
      seen.push([...todos.map((x) => x.id).sort(), ...jobs.map((j) => `job of ${j.todo_id}`)]);
      return readyCheck(t.id)(todos, jobs);
    };
    expect(() => store.jobs.claim('r', { todo_id: t.id }, check)).toThrow(
      `todo ${t.id} is not ready: waits for ${dep.id} "dep" (open)`,
    );
    expect(seen[0]).toEqual([dep.id, t.id].sort());
    store.todos.setStatus('r', dep.id, 'done');
    expect(store.jobs.claim('r', { todo_id: t.id }, check).todo_id).toBe(t.id);
  });

  it('two connections (two processes) claiming every todo get each todo exactly once', () => {
    const other = openStateStore({ dir: join(tmp.path, 'incrementum') });
    try {
      const ids = Array.from({ length: 20 }, (_, i) => store.todos.create('r', { title: `t${i}` }).id);
      const won: string[] = [];
      for (const id of ids)
        for (const s of [store, other, store])
          try {
            won.push(s.jobs.claim('r', { todo_id: id }, readyCheck(id)).todo_id);
          } catch (err) {
            expect((err as Error).message).toMatch(/not open|already has a job/);
          }
      expect(won.sort()).toEqual([...ids].sort());
    } finally {
      other.close();
    }
  });
});

describe("backlog runners' starts", () => {
  it('a todo another runner is starting is refused to the next, through its own connection; a runner found dead does not hold it', () => {
    const other = openStateStore({ dir: join(tmp.path, 'incrementum') });
    try {
      const reg = (s: StateStore, pid: number) =>
        s.runners.register({ repo: 'r', pid, host: 'h', slots: 2, watch: false });
      const a = reg(store, 101);
      const b = reg(other, 102);
      const dead = new Set<number>();
      const takenBy = (id: string) => (others: { pid: number; starting: string[] }[]) =>
        others.some((r) => r.starting.includes(id) && !dead.has(r.pid));
      expect(store.runners.takeStart(a.id, 't1', takenBy('t1'))).toBe(true);
      expect(other.runners.takeStart(b.id, 't1', takenBy('t1'))).toBe(false);
      expect(other.runners.takeStart(b.id, 't2', takenBy('t2'))).toBe(true);
      expect(store.runners.get(a.id)?.starting).toEqual(['t1']);
      expect(store.runners.get(b.id)?.starting).toEqual(['t2']);
      // Its runner claimed (or failed): no longer starting, so anyone may.
      store.runners.setStarting(a.id, []);
      expect(other.runners.takeStart(b.id, 't1', takenBy('t1'))).toBe(true);
      expect(other.runners.get(b.id)?.starting).toEqual(['t2', 't1']);
      // b dies with its starts recorded: they hold nothing.
      dead.add(102);
      expect(store.runners.takeStart(a.id, 't2', takenBy('t2'))).toBe(true);
    } finally {
      other.close();
    }
  });
});

describe('a store made by schema 7', () => {
  it('opens with its todos, deps and jobs kept, and counts old failures', () => {
    const dir = join(tmp.path, 'old');
    mkdirSync(dir, { recursive: true });
    const raw = new DatabaseSync(join(dir, 'state.db'));
    migrate(raw, 0, 7);
    const T = '2026-01-01T00:00:00.000Z';
    const ins = raw.prepare(
      'INSERT INTO todos (id, repo, title, deps, status, created_at, updated_at) VALUES (?,?,?,?,?,?,?)',
    );
    ins.run('t1', 'r', 'first', '[]', 'done', T, T);
    ins.run('t2', 'r', 'second', '["t1"]', 'open', T, T);
    ins.run('t3', 'r', 'third', '["t2"]', 'open', T, T);
    raw
      .prepare(
        "INSERT INTO jobs (id, repo, todo_id, stage, status, started_at, updated_at) VALUES ('j1','r','t2','implementing','failed',?,?)",
      )
      .run(T, T);
    raw.close();
    const s = openStateStore({ dir });
    try {
      expect(s.todos.get('r', 't2')).toMatchObject({ deps: ['t1'], reopened_at: null });
      const plan = backlog(s.todos.list('r'), s.jobs.briefs('r'), { maxAttempts: 2 });
      expect(plan.ready.map((t) => t.id)).toEqual(['t2']);
      expect(plan.blocked.map((b) => b.todo.id)).toEqual(['t3']);
      expect(() => s.todos.update('r', 't1', { deps: ['t3'] })).toThrow('t1 → t3 → t2 → t1');
    } finally {
      s.close();
    }
  });
});

describe('todos written after a store version', () => {
  it('lists each todo that any write touched (create, edit, close, reopen, status, a claim), and no other', () => {
    const a = store.todos.create('r', { title: 'A' });
    const b = store.todos.create('r', { title: 'B' });
    const c = store.todos.create('r', { title: 'C' });
    store.todos.create('other', { title: 'elsewhere' });
    const ids = (after: number) =>
      store.todos
        .listChangedAfter('r', after)
        .map((t) => t.id)
        .sort();
    const v0 = store.jobs.version();
    expect(ids(v0)).toEqual([]);
    const steps: [() => unknown, string][] = [
      [() => store.todos.update('r', a.id, { title: 'A2' }), a.id],
      [() => store.todos.close('r', b.id), b.id],
      [() => store.todos.reopen('r', b.id), b.id],
      [() => store.todos.setStatus('r', c.id, 'done'), c.id],
      [() => store.jobs.claim('r', { todo_id: a.id }, readyCheck(a.id)), a.id],
      [() => store.todos.create('r', { title: 'D' }).id, ''],
    ];
    for (const [step, id] of steps) {
      const before = store.jobs.version();
      const made = step();
      expect(ids(before)).toEqual([id || (made as string)]);
    }
    expect(store.todos.listChangedAfter('r', v0).find((t) => t.id === a.id)?.status).toBe('in_progress');
  });
});
