// updateBacklog (model/backlog.ts) decides again only the todos written and
// their dependents, and puts them in their place; whatever was written, the
// column must be the one a full rebuild (backlog()) gives. The board's cards
// built from it are kept for what did not change (view/board.ts).
import { describe, expect, it } from 'vitest';
import {
  backlog,
  updateBacklog,
  type Backlog,
  type BacklogIndex,
  type JobBrief,
} from '../../src/model/backlog.js';
import type { Todo } from '../../src/model/todo.js';
import { boardColumns, todoCard } from '../../src/dashboard/view/board.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';

const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
const todo = (id: string, o: Partial<Todo> = {}): Todo => ({
  id,
  repo: 'r',
  title: `title ${id}`,
  description: '',
  type: 'task',
  priority: 2,
  deps: [],
  status: 'open',
  created_at: at(0),
  updated_at: at(0),
  reopened_at: null,
  ...o,
});
const brief = (id: string, todo_id: string, status: JobBrief['status'], unlanded = false): JobBrief => ({
  id,
  todo_id,
  status,
  stage: 'implementing',
  started_at: at(100),
  completed_at: null,
  pid: null,
  host: null,
  heartbeat_at: null,
  updated_at: at(100),
  cost: 0,
  iteration: 0,
  unlanded,
  committed: unlanded,
});

/** 60 todos of mixed priorities and ages, chains of deps, some done, closed, held or failed. */
function world() {
  const todos = new Map<string, Todo>();
  for (let i = 0; i < 60; i++) {
    const id = `t${String(i).padStart(2, '0')}`;
    todos.set(
      id,
      todo(id, {
        priority: i % 4,
        // Some share a creation time: the id breaks the tie.
        created_at: at(i % 7),
        deps: i % 5 === 1 ? [`t${String(i - 1).padStart(2, '0')}`] : i === 7 ? ['gone'] : [],
        status: i % 10 === 0 ? 'done' : i === 13 ? 'closed' : i === 17 ? 'in_progress' : 'open',
      }),
    );
  }
  const jobs = [
    brief('j1', 't03', 'active'),
    brief('j2', 't04', 'failed'),
    brief('j3', 't04', 'failed'),
    brief('j4', 't20', 'completed', true),
    brief('j5', 't08', 'abandoned'),
  ];
  return { todos, jobs };
}

const ids = (b: Backlog) => ({
  ready: b.ready.map((t) => t.id),
  blocked: b.blocked.map((x) => [x.todo.id, x.blockers]),
  unlanded: b.unlanded,
});

/** Writes `next` into the todos and checks the update against a full rebuild; returns both. */
function write(todos: Map<string, Todo>, jobs: JobBrief[], prev: Backlog, next: Todo[], gone: string[] = []) {
  for (const t of next) todos.set(t.id, t);
  for (const id of gone) todos.delete(id);
  const o = { maxAttempts: 2 };
  const updated = updateBacklog(prev, todos, new Set([...next.map((t) => t.id), ...gone]), jobs, o);
  const full = backlog([...todos.values()], jobs, o);
  expect(ids(updated)).toEqual(ids(full));
  return { updated, full };
}

/** What the board's sync knows (BacklogIndex): each written todo as it was, and who depends on whom. */
const indexOf = (todos: Map<string, Todo>, was: Map<string, Todo>): BacklogIndex => ({
  was,
  dependents: (id) => [...todos.values()].filter((t) => t.deps.includes(id)).map((t) => t.id),
});

/** The Backlog column's cards as built one by one from a backlog. */
const cardsOf = (b: Backlog) => [
  ...b.ready.map((t) => todoCard(t, null, b.unlanded[t.id])),
  ...b.blocked.map((x) => todoCard(x.todo, x.blockers)),
];

describe('updateBacklog: the same column as a full rebuild', () => {
  for (const depsLanded of [false, true]) {
    it(`an inserted, a moved, a deleted, a closed and a reopened todo${depsLanded ? ' (deps must land)' : ''}`, () => {
      const { todos, jobs } = world();
      const o = { maxAttempts: 2, ...(depsLanded ? { depsLanded } : {}) };
      let b = backlog([...todos.values()], jobs, o);
      // Also with the sync's index, and the board's column walked from the last one.
      let bi = b;
      const store = createDashboardStore({ repo: 'r', repoLabel: 'r' });
      store.getState().setBacklog(bi);
      const step = (next: Todo[], gone: string[] = []) => {
        const was = new Map<string, Todo>();
        for (const id of [...next.map((t) => t.id), ...gone]) if (todos.has(id)) was.set(id, todos.get(id)!);
        for (const t of next) todos.set(t.id, t);
        for (const id of gone) todos.delete(id);
        const changed = new Set([...next.map((t) => t.id), ...gone]);
        const u = updateBacklog(b, todos, changed, jobs, o);
        const full = backlog([...todos.values()], jobs, o);
        expect(ids(u)).toEqual(ids(full));
        b = u;
        bi = updateBacklog(bi, todos, changed, jobs, o, indexOf(todos, was));
        expect(ids(bi)).toEqual(ids(full));
        store.getState().setBacklog(bi);
        expect(boardColumns(store.getState())[0]!.cards).toEqual(cardsOf(full));
      };
      // Inserted: at the top (priority 0, newest), in the middle, and one a missing dep named.
      step([todo('new-top', { priority: 0, created_at: at(50) })]);
      step([todo('new-mid', { priority: 2, created_at: at(3) })]);
      step([todo('gone', { status: 'open' })]);
      // Moved: a priority change, to the end and back to the front.
      step([{ ...todos.get('t22')!, priority: 3, created_at: at(99) }]);
      step([{ ...todos.get('t22')!, priority: 0, created_at: at(0) }]);
      // A dep done, so its dependent is ready (or waits to land); then open again.
      step([{ ...todos.get('t05')!, status: 'done' }]);
      step([{ ...todos.get('t20')!, status: 'open' }]);
      step([{ ...todos.get('t05')!, status: 'open' }]);
      // Deleted, closed, reopened after failures, retitled (its dependents' blockers name it).
      step([], ['t31']);
      step([{ ...todos.get('t32')!, status: 'closed' }]);
      step([{ ...todos.get('t04')!, reopened_at: at(200) }]);
      step([{ ...todos.get('t15')!, title: 'a new title' }]);
      // Several at once.
      step(
        [todo('a'), { ...todos.get('t41')!, priority: 0 }, { ...todos.get('t40')!, status: 'open' }],
        ['t44'],
      );
    });
  }

  it("with the sync's index, finds what to decide again without going through every todo", () => {
    // With 10,000 todos, going through all of them (their deps) and every
    // entry was most of updateBacklog's time for one new todo.
    const { todos, jobs } = world();
    const o = { maxAttempts: 2 };
    const prev = backlog([...todos.values()], jobs, o);
    const was = new Map([['t20', todos.get('t20')!]]);
    todos.set('t20', { ...todos.get('t20')!, status: 'open' });
    todos.set('new', todo('new', { priority: 0 }));
    const full = backlog([...todos.values()], jobs, o);
    const index = indexOf(todos, was);
    const deps = index.dependents;
    const counted = Object.assign(new Map(todos), {
      values: () => {
        throw new Error('went through every todo');
      },
    });
    const u = updateBacklog(prev, counted, new Set(['t20', 'new']), jobs, o, { was, dependents: deps });
    expect(ids(u)).toEqual(ids(full));
  });

  it('keeps the entries it did not decide again, and nothing changed gives the same backlog', () => {
    const { todos, jobs } = world();
    const prev = backlog([...todos.values()], jobs, { maxAttempts: 2 });
    expect(updateBacklog(prev, todos, new Set(), jobs, { maxAttempts: 2 })).toBe(prev);
    const { updated } = write(todos, jobs, prev, [todo('new', { priority: 0 })]);
    const kept = prev.ready.filter((t) => updated.ready.includes(t));
    expect(kept.length).toBe(prev.ready.length);
    expect(updated.blocked.filter((b) => prev.blocked.includes(b)).length).toBe(prev.blocked.length);
    // The ready todos' unlanded deps too, as the very record, when none of them changed (the
    // board then compares none of them: view/board.ts backlogCardsFrom).
    expect(Object.keys(prev.unlanded).length).toBeGreaterThan(0);
    expect(updated.unlanded).toBe(prev.unlanded);
  });
});

describe("the board's Backlog column after an update", () => {
  it('shows the cards a full rebuild shows, and keeps the unchanged ones', () => {
    const { todos, jobs } = world();
    const o = { maxAttempts: 2 };
    const store = createDashboardStore({ repo: 'r', repoLabel: 'r' });
    const column = () => boardColumns(store.getState())[0]!;
    const prev = backlog([...todos.values()], jobs, o);
    store.getState().setBacklog(prev);
    const before = column();
    const moved = { ...todos.get('t22')!, priority: 0 };
    const { updated, full } = write(todos, jobs, prev, [todo('new', { priority: 0 }), moved]);
    store.getState().setBacklog(updated);
    const after = column();
    store.getState().setBacklog(full);
    expect(after.cards).toEqual(column().cards);
    expect(after.cards.map((c) => c.key)).toContain('todo:new');
    // Every card but the two written is the very card drawn before.
    const same = after.cards.filter((c) => before.cards.includes(c));
    expect(same.length).toBe(after.cards.length - 2);
  });

  it('a todo kept by a full rebuild shows what changed around it: its dep landed', () => {
    const { todos, jobs } = world();
    const o = { maxAttempts: 2 };
    const store = createDashboardStore({ repo: 'r', repoLabel: 'r' });
    const card = (id: string) => boardColumns(store.getState())[0]!.cards.find((c) => c.key === `todo:${id}`);
    store.getState().setBacklog(backlog([...todos.values()], jobs, o));
    expect(card('t21')?.detail).toContain('t20 not landed');
    // The same todo objects, the job that made t20 now landed: the jobs changed, so a full rebuild.
    const landed = jobs.map((j) => (j.id === 'j4' ? { ...j, unlanded: false } : j));
    store.getState().setBacklog(backlog([...todos.values()], landed, o));
    expect(card('t21')?.detail).not.toContain('not landed');
  });
});
