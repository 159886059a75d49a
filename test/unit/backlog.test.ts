import { describe, expect, it } from 'vitest';
import { backlog, claimRefusal, depCycle, describeBlocker, type JobBrief } from '../../src/model/backlog.js';
import { runnersLand } from '../../src/model/backlog-runner.js';
import type { Todo } from '../../src/model/todo.js';
import { blockerWords } from '../../src/dashboard/view/board.js';

const todo = (id: string, o: Partial<Todo> = {}): Todo => ({
  id,
  repo: 'r',
  title: `title ${id}`,
  description: '',
  type: 'task',
  priority: 2,
  deps: [],
  status: 'open',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  reopened_at: null,
  ...o,
});
const job = (
  id: string,
  todo_id: string,
  status: JobBrief['status'],
  started_at = '2026-01-02T00:00:00.000Z',
  unlanded = false,
): JobBrief => ({
  id,
  todo_id,
  status,
  stage: 'implementing',
  started_at,
  completed_at: null,
  pid: null,
  host: null,
  heartbeat_at: null,
  updated_at: started_at,
  cost: 0,
  iteration: 0,
  unlanded,
  committed: unlanded,
});
const OPTS = { maxAttempts: 2 };

describe('backlog readiness', () => {
  it('run order: priority 0 first, then oldest, then id', () => {
    const b = backlog(
      [
        todo('c', { priority: 2, created_at: '2026-01-01T00:00:01.000Z' }),
        todo('b', { priority: 2, created_at: '2026-01-01T00:00:00.000Z' }),
        todo('a', { priority: 2, created_at: '2026-01-01T00:00:00.000Z' }),
        todo('z', { priority: 0, created_at: '2026-03-01T00:00:00.000Z' }),
      ],
      [],
      OPTS,
    );
    expect(b.ready.map((t) => t.id)).toEqual(['z', 'a', 'b', 'c']);
  });

  it('only open todos whose deps are all done, held by no active job', () => {
    const b = backlog(
      [
        todo('done', { status: 'done' }),
        todo('wip', { status: 'in_progress' }),
        todo('closed', { status: 'closed' }),
        todo('ok', { deps: ['done'] }),
        todo('waits', { deps: ['done', 'wip'] }),
        todo('held'),
      ],
      [job('j1', 'held', 'active'), job('j0', 'ok', 'completed')],
      OPTS,
    );
    expect(b.ready.map((t) => t.id)).toEqual(['ok']);
    expect(b.blocked.map((x) => [x.todo.id, x.blockers])).toEqual([
      ['held', [{ kind: 'job', job_id: 'j1', stale: false }]],
      ['waits', [{ kind: 'dep', dep_id: 'wip', title: 'title wip', state: 'in_progress' }]],
    ]);
  });

  it('a dep closed, abandoned or missing blocks, and says by what', () => {
    const b = backlog(
      [
        todo('c', { status: 'closed', title: 'Closed one' }),
        todo('ab', { title: 'Gave up' }),
        todo('x', { deps: ['c', 'ab', 'gone'] }),
      ],
      [
        job('j1', 'ab', 'failed', '2026-01-02T00:00:00.000Z'),
        job('j2', 'ab', 'abandoned', '2026-01-03T00:00:00.000Z'),
      ],
      { maxAttempts: 5 },
    );
    const x = b.blocked.find((t) => t.todo.id === 'x')!;
    expect(x.blockers.map(describeBlocker)).toEqual([
      'waits for c "Closed one" (closed)',
      'waits for ab "Gave up" (abandoned)',
      'waits for gone (missing)',
    ]);
    // ab itself is ready: 2 failures < 5
    expect(b.ready.map((t) => t.id)).toEqual(['ab']);
  });

  it('under ii run --land a dep is done once its commits landed, not when its job completed', () => {
    const todos = [
      todo('a', { status: 'done', title: 'Add it' }),
      todo('b', { status: 'done' }),
      todo('c', { status: 'done' }),
      todo('x', { deps: ['a'] }),
      todo('y', { deps: ['b'] }),
      todo('z', { deps: ['c'] }),
    ];
    const jobs = [
      // a: completed, its commits not landed yet (an earlier try failed).
      job('j1', 'a', 'failed', '2026-01-02T00:00:00.000Z'),
      job('j2', 'a', 'completed', '2026-01-03T00:00:00.000Z', true),
      // b: completed and landed (or nothing to land).
      job('j3', 'b', 'completed', '2026-01-02T00:00:00.000Z', false),
      // c: done with no job of ours (closed by hand, or before incrementum): nothing waits to land.
    ];
    const strict = backlog(todos, jobs, { ...OPTS, depsLanded: true });
    expect(strict.ready.map((t) => t.id)).toEqual(['y', 'z']);
    expect(strict.blocked.map((x) => [x.todo.id, x.blockers.map(describeBlocker)])).toEqual([
      ['x', ['waits for a "Add it" (done, not landed yet)']],
    ]);
    expect(claimRefusal('x', todos, jobs, { ...OPTS, depsLanded: true, mode: 'ready' })).toContain(
      'not landed yet',
    );
    expect(strict.unlanded).toEqual({});
    // Without it (ii run, ii todo list) completing is enough, and the
    // backlog says which ready todo's deps have not landed (the board shows it).
    const loose = backlog(todos, jobs, OPTS);
    expect(loose.ready.map((t) => t.id)).toEqual(['x', 'y', 'z']);
    expect(loose.unlanded).toEqual({ x: ['a'] });
    // Landed later: ready.
    const later = jobs.map((j) => (j.id === 'j2' ? { ...j, unlanded: false } : j));
    expect(backlog(todos, later, { ...OPTS, depsLanded: true }).ready.map((t) => t.id)).toEqual([
      'x',
      'y',
      'z',
    ]);
  });

  it('max-attempts: failed or abandoned jobs since the last reopen keep a todo back', () => {
    const jobs = [
      job('j1', 'a', 'failed', '2026-01-02T00:00:00.000Z'),
      job('j2', 'a', 'abandoned', '2026-01-03T00:00:00.000Z'),
    ];
    const b = backlog([todo('a')], jobs, OPTS);
    expect(b.ready).toEqual([]);
    // Each kind as it was: one failed and one abandoned is not "failed 2 times".
    expect(b.blocked[0]!.blockers.map(describeBlocker)).toEqual([
      '1 job failed and 1 was abandoned; ii todo reopen to try again',
    ]);
    expect(b.blocked[0]!.blockers.map(blockerWords)).toEqual(['failed 1×, abandoned 1×: ii todo reopen']);
    const twice = (status: JobBrief['status']) =>
      backlog([todo('a')], [job('j1', 'a', status), job('j2', 'a', status, '2026-01-03T00:00:00.000Z')], OPTS)
        .blocked[0]!.blockers;
    expect(twice('failed').map(describeBlocker)).toEqual([
      'its jobs failed 2 times; ii todo reopen to try again',
    ]);
    expect(twice('abandoned').map(describeBlocker)).toEqual([
      'its jobs were abandoned 2 times; ii todo reopen to try again',
    ]);
    expect(twice('abandoned').map(blockerWords)).toEqual(['abandoned 2×: ii todo reopen']);
    expect(backlog([todo('a')], jobs.slice(0, 1), OPTS).ready.map((t) => t.id)).toEqual(['a']);
    const reopened = todo('a', { reopened_at: '2026-01-02T12:00:00.000Z' });
    expect(backlog([reopened], jobs, OPTS).ready.map((t) => t.id)).toEqual(['a']);
  });

  it('a todo held by a job whose runner is gone says how to run it again', () => {
    const b = backlog([todo('a')], [job('j1', 'a', 'active')], { ...OPTS, isStale: (j) => j.id === 'j1' });
    expect(b.blocked[0]!.blockers.map(describeBlocker)).toEqual([
      'held by job j1, whose runner is gone: ii job retry j1 runs it again',
    ]);
  });
});

describe('whether the live runners land', () => {
  it('lands only when every live runner does; null when none runs', () => {
    expect(runnersLand([])).toBeNull();
    expect(runnersLand([{ lands: true }])).toBe(true);
    // One that does not land starts a todo whose deps completed: it is ready.
    expect(runnersLand([{ lands: true }, { lands: false }])).toBe(false);
  });
});

describe('claims', () => {
  it('ready mode wants the todo ready; manual only wants it free and not closed', () => {
    const todos = [todo('d'), todo('a', { deps: ['d'] }), todo('c', { status: 'closed' }), todo('h')];
    const jobs = [job('j1', 'h', 'active')];
    const ready = { ...OPTS, mode: 'ready' as const };
    const manual = { ...OPTS, mode: 'manual' as const };
    expect(claimRefusal('d', todos, jobs, ready)).toBeNull();
    expect(claimRefusal('a', todos, jobs, ready)).toMatch(
      /todo a is not ready: waits for d "title d" \(open\)/,
    );
    expect(claimRefusal('a', todos, jobs, manual)).toBeNull();
    expect(claimRefusal('c', todos, jobs, manual)).toMatch(/closed; reopen it first: ii todo reopen c/);
    expect(claimRefusal('h', todos, jobs, manual)).toMatch(/already has a job, j1/);
    expect(claimRefusal('nope', todos, jobs, manual)).toMatch(/no todo nope/);
    expect(claimRefusal('d', [todo('d', { status: 'done' })], [], ready)).toMatch(/is done, not open/);
  });
});

describe('dep cycles', () => {
  const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: [], d: [] };
  const depsOf = (id: string) => graph[id] ?? [];
  it('names the cycle a new dep would close', () => {
    expect(depCycle('c', ['a'], depsOf)).toEqual(['c', 'a', 'b', 'c']);
    expect(depCycle('b', ['a'], depsOf)).toEqual(['b', 'a', 'b']);
    expect(depCycle('a', ['a'], depsOf)).toEqual(['a', 'a']);
  });
  it('none when the graph stays acyclic (shared deps are not cycles)', () => {
    expect(depCycle('d', ['a', 'b', 'c'], depsOf)).toBeNull();
    expect(depCycle('a', ['c', 'd'], depsOf)).toBeNull();
  });
});
