// The commit board's mark: `m` on one iteration, `d` on another diffs the
// pair (as `ii job diff --from C.I --to C.I`), across changes too; esc clears
// the mark before it goes back.
import { expect, it } from 'vitest';
import { diffKey } from '../../src/dashboard/view/state.js';
import { frameWith, frameWithout, KEY, makeJob, dashboards } from '../helpers/dash-fixture.js';

const board = dashboards();

it('m marks 1.1, d on 1.3 diffs the pair: titles, files and summary of 1.1 → 1.3; esc clears the mark', async () => {
  const fx = board.fixture();
  const job = makeJob(fx.state, {
    title: 'three tries',
    changes: 1,
    iterations: 3,
    tested: true,
    review: 'ACCEPT',
  });
  const app = await board.render(fx, { columns: 120, rows: 30 });
  const { lastFrame, stdin } = app;
  await frameWith(lastFrame, 'three tries');
  stdin.write(KEY.enter);
  await frameWith(lastFrame, 'Committed (1)');
  stdin.write(KEY.enter);
  // The cursor starts on i1 (the first iteration of the first column with cards).
  await frameWith(lastFrame, 'Rejected (2)', 'Accepted (1)');
  stdin.write('m');
  await frameWith(lastFrame, '◆ marked · i1', 'marked 1.1: d diffs against it');
  stdin.write('d');
  await frameWith(lastFrame, '1.1 is the marked iteration: move to another one');
  stdin.write(KEY.right);
  stdin.write('d');
  const f = await frameWith(
    lastFrame,
    'Diff of iterations 1.1 → 1.3',
    'iterations 1.1 → 1.3:',
    'summary: Change 1, iteration 1 → change 1, iteration 3',
  );
  expect(f).toContain('files: ');
  const d = fx.dash.getState().diffs[diffKey(job.id, 1, 3, { change: 1, iteration: 1 })];
  expect(d?.loaded?.from_iteration).toEqual({ change: 1, iteration: 1 });
  expect(d?.loaded?.iteration).toBe(3);
  stdin.write(KEY.esc);
  await frameWithout(lastFrame, 'Diff of iterations');
  // Without the mark, d is the iteration against the one before it again.
  stdin.write(KEY.esc);
  await frameWithout(lastFrame, 'marked 1.1');
  expect(lastFrame()).toContain('Rejected (2)');
  stdin.write('d');
  await frameWith(lastFrame, 'Iteration diff · 1.3 against the one before', 'iteration 3 of change 1');
});

it('a mark reaches another change: ] steps to change 2, d diffs 1.2 → 2.2', async () => {
  const fx = board.fixture();
  const job = makeJob(fx.state, { title: 'two changes', changes: 2, iterations: 2, tested: true });
  const app = await board.render(fx, { columns: 120, rows: 30 });
  const { lastFrame, stdin } = app;
  await frameWith(lastFrame, 'two changes');
  stdin.write(KEY.enter);
  await frameWith(lastFrame, '#1 ', '#2 ');
  stdin.write(KEY.enter);
  await frameWith(lastFrame, 'change 1');
  stdin.write('j');
  stdin.write('m');
  await frameWith(lastFrame, 'marked 1.2');
  stdin.write('[');
  await frameWith(lastFrame, 'this is the first change');
  stdin.write(']');
  await frameWith(lastFrame, 'change 2', 'marked 1.2');
  // The cursor is on 2.2, the card the user sees selected (the last, not yet reviewed).
  stdin.write('d');
  await frameWith(lastFrame, 'Diff of iterations 1.2 → 2.2', 'iterations 1.2 → 2.2:');
  expect(fx.dash.getState().diffs[diffKey(job.id, 2, 2, { change: 1, iteration: 2 })]?.loaded).toBeTruthy();
  stdin.write(KEY.esc);
  await frameWithout(lastFrame, 'Diff of iterations');
  // Esc clears the mark first, then goes back a level as before.
  stdin.write(KEY.esc);
  await frameWithout(lastFrame, 'marked 1.2');
  expect(lastFrame()).toContain('change 2');
  stdin.write(KEY.esc);
  await frameWith(lastFrame, '#1 ', '#2 ');
});

it('m on the jobs board lands a job: a running one is refused, saying why', async () => {
  const fx = board.fixture();
  makeJob(fx.state, { title: 'a job', changes: 1 });
  const app = await board.render(fx);
  const { lastFrame, stdin } = app;
  await frameWith(lastFrame, 'a job');
  stdin.write('m');
  await frameWith(lastFrame, 'only a completed job can be landed');
});
