// A done todo whose completing job made nothing says so ("done · no
// changes"), derived from the job records: on the board's job card and in
// ii todo list / show (test/e2e/todo-no-changes.test.ts).
import { afterEach, expect, it } from 'vitest';
import { jobCard } from '../../src/dashboard/view/board.js';
import { doneWithoutChanges, todoStatusWords } from '../../src/model/todo-outcome.js';
import { dashFixture, makeJob, REPO, type DashFixture } from '../helpers/dash-fixture.js';

let fx: DashFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

const brief = (todo_id: string, status: 'completed' | 'failed', committed: boolean, at: string) => ({
  todo_id,
  status,
  committed,
  started_at: at,
  completed_at: at,
});

it('a done todo is "no changes" when the job that completed it last made no commit', () => {
  const todos = ['a', 'b', 'c', 'd', 'e'].map(
    (id) => ({ id, status: id === 'e' ? 'open' : 'done' }) as const,
  );
  const jobs = [
    brief('a', 'completed', false, '2026-01-02'),
    brief('b', 'completed', true, '2026-01-02'),
    // c: made commits once, then a retry completed with none: the last one decides.
    brief('c', 'completed', true, '2026-01-02'),
    brief('c', 'completed', false, '2026-01-03'),
    // d: the other way round; a failed job's commits say nothing of what completed it.
    brief('d', 'completed', false, '2026-01-02'),
    brief('d', 'completed', true, '2026-01-03'),
    brief('d', 'failed', false, '2026-01-04'),
    // e: open again (reopened): not done, nothing to say.
    brief('e', 'completed', false, '2026-01-02'),
  ];
  expect([...doneWithoutChanges(todos, jobs)].sort()).toEqual(['a', 'c']);
  // Done with no job at all (by hand): nothing says it made nothing.
  expect(doneWithoutChanges([{ id: 'f', status: 'done' }], [])).toEqual(new Set());
  expect(todoStatusWords({ status: 'done' }, true)).toBe('done · no changes');
  expect(todoStatusWords({ status: 'done' }, false)).toBe('done');
  expect(todoStatusWords({ status: 'open' }, true)).toBe('open');
});

it("the board's card of a job that completed without a commit says done · no changes", () => {
  fx = dashFixture();
  const empty = makeJob(fx.state, { title: 'nothing to do', finish: 'completed' });
  const made = makeJob(fx.state, { title: 'made one', finish: 'completed', changes: 1 });
  expect(jobCard(empty, 'nothing to do', false).detail).toMatch(/^done · no changes · /);
  expect(jobCard(made, 'made one', false).detail).toMatch(/^1 change · /);
  // The store's briefs carry it: the todo of the empty one is among the done todos that made nothing.
  const briefs = fx.state.jobs.briefs(REPO);
  expect([...doneWithoutChanges(fx.state.todos.list(REPO), briefs)]).toEqual([empty.todo_id]);
});
