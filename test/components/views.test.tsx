// Views at the terminal sizes people use, and with many jobs.
import { render } from 'ink-testing-library';
import { afterEach, expect, it } from 'vitest';
import { Board, columnWidths } from '../../components/Board.js';
import { Card } from '../../components/Card.js';
import { CommitDetail, commitDetailLines } from '../../components/CommitDetail.js';
import { columnTitle, shortNames, windowStart } from '../../components/Column.js';
import { jobCard } from '../../src/dashboard/view/board.js';
import {
  dashFixture,
  frameWith,
  KEY,
  makeJob,
  renderDashboard,
  type DashFixture,
} from '../helpers/dash-fixture.js';
import { shortJobId } from '../../src/model/job-id.js';

let fx: DashFixture | null = null;
let app: ReturnType<typeof render> | null = null;
afterEach(async () => {
  app?.unmount();
  app = null;
  await fx?.cleanup();
  fx = null;
});

it('fits 80×24 with 1,000 jobs: only the visible cards, and a count of the rest', async () => {
  fx = dashFixture();
  const first = makeJob(fx.state, { title: 'first job' });
  for (let i = 0; i < 999; i++)
    fx.state.jobs.create(first.repo, { todo_id: first.todo_id, pid: 4242, host: 'here' });
  app = await renderDashboard(fx, { columns: 80, rows: 24 });
  const f = await frameWith(app.lastFrame, 'Impl (1000)', 'more');
  const lines = f.split('\n');
  expect(lines.length).toBeLessThanOrEqual(24);
  expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(80);
  // Moving down a long way keeps the cursor's card on screen.
  for (let i = 0; i < 30; i++) app.stdin.write(KEY.down);
  const sel = await frameWith(app.lastFrame, '↑');
  const key = fx.dash.getState().nav.sel.jobs.key!;
  expect(sel).toContain(shortJobId(key));
});

it('windows a column around the selected card', () => {
  expect(windowStart(5, 10, 3)).toBe(0);
  expect(windowStart(100, 10, 0)).toBe(0);
  expect(windowStart(100, 10, 50)).toBe(45);
  expect(windowStart(100, 10, 99)).toBe(90);
});

it('names columns for the width once, whatever the counts; gives empty columns room for their name only', () => {
  const jobs = ['Implementing', 'Testing', 'Reviewing', 'Committing', 'Completed', 'Failed', 'Abandoned'];
  expect(shortNames(jobs, 160)).toBe(false);
  expect(shortNames(jobs, 120)).toBe(false);
  expect(shortNames(jobs, 80)).toBe(true);
  expect(columnTitle('Implementing', 3, false)).toBe('Implementing (3)');
  expect(columnTitle('Implementing', 3, true)).toBe('Impl (3)');
  expect(columnTitle('Implementing', 0, true)).toBe('Impl');
  // Short, the columns that start alike still read differently.
  expect(['Committing', 'Completed', 'Reviewing', 'Rejected'].map((t) => columnTitle(t, 1, true))).toEqual([
    'Commit (1)',
    'Done (1)',
    'Rev (1)',
    'Rej (1)',
  ]);
  expect(columnWidths([0, 5, 0], 80, ['Impl', 'Test', 'Rev'])).toEqual([6, 69, 5]);
  expect(columnWidths([1, 1], 80)).toEqual([40, 40]);
});

it('renders a board and a card alone', async () => {
  fx = dashFixture();
  const job = makeJob(fx.state, { title: 'lonely card', changes: 1 });
  const card = jobCard(job, 'lonely card', true);
  app = render(<Card card={card} selected width={40} color={false} />);
  await frameWith(app.lastFrame, 'STALE', 'lonely card', shortJobId(job.id));
  app.unmount();
  // A card a dozen columns wide (80 columns, seven columns) still shows the title's start.
  app = render(<Card card={jobCard(job, 'lonely card', false)} selected={false} width={12} color={false} />);
  await frameWith(app.lastFrame, 'lonely card');
  app.unmount();
  app = render(
    <Board
      columns={[
        { title: 'Left', cards: [card] },
        { title: 'Right', cards: [] },
      ]}
      cursor={{ col: 0, row: 0 }}
      width={60}
      height={10}
      color={false}
    />,
  );
  await frameWith(app.lastFrame, 'Left (1)', 'Right', 'lonely card');
});

it('the commit detail names the final commit of an accepted iteration, and the iteration it came from', async () => {
  fx = dashFixture();
  const job = makeJob(fx.state, { title: 'final', changes: 1 });
  const commit = job.changes[0]!.commits.at(-1)!;
  const final = { ...commit, commit_id: 'f'.repeat(40), iteration_commit_id: commit.commit_id };
  const committed = { ...job, changes: [{ ...job.changes[0]!, commits: [final] }] };
  const lines = commitDetailLines(committed, 0, 0, undefined);
  expect(lines[0]).toBe(`final commit: ${'f'.repeat(40)}  (iteration ${commit.commit_id.slice(0, 10)})`);
  app = render(
    <CommitDetail
      job={committed}
      change={0}
      iteration={0}
      code={undefined}
      width={100}
      height={10}
      scroll={0}
      color={false}
    />,
  );
  await frameWith(app.lastFrame, `iteration 1 ${'f'.repeat(10)}`, 'final commit: ffff');
  // iteration-history.md, Decision › 4 "Enhanced IterationEntry": the entry's own id, shown beside C.I.
  expect(commit.id).toMatch(/^[0-9a-f]{12}$/);
  expect(app.lastFrame()).toContain(`iteration 1 ${'f'.repeat(10)} · id ${commit.id}`);
  // An iteration not yet committed has no such line.
  expect(commitDetailLines(job, 0, 0, undefined)[0]).toBe('tests: not run');
});

it('the commit detail says a test command timed out, not just its exit code', () => {
  fx = dashFixture();
  const job = makeJob(fx.state, { title: 'hanging test', changes: 1 });
  const commit = job.changes[0]!.commits.at(-1)!;
  const tested = {
    ...commit,
    tests_passed: false,
    test_results: [
      { command: 'npm test', exit_code: 124, duration_ms: 2000, timed_out_after_s: 2 },
      { command: 'npm run lint', exit_code: 1, duration_ms: 5 },
    ],
  };
  const lines = commitDetailLines(
    { ...job, changes: [{ ...job.changes[0]!, commits: [tested] }] },
    0,
    0,
    undefined,
  );
  expect(lines).toContain('  ✗ npm test (timed out after 2 s, 2000 ms)');
  expect(lines).toContain('  ✗ npm run lint (exit 1, 5 ms)');
});
