// The dashboard at the sizes people use, 80×24 and 160×45: the way out and
// the help stay on screen, column names hold still while jobs move, and the
// room goes to what is read.
import { expect, it } from 'vitest';
import { selectedJob } from '../../src/dashboard/view/board.js';
import { fitHints, helpSections, keyHints } from '../../src/dashboard/view/keymap.js';
import { frameWith, KEY, makeJob, dashboards } from '../helpers/dash-fixture.js';
import { shortJobId } from '../../src/model/job-id.js';

const board = dashboards();

const lastLine = (f: string) => f.split('\n').at(-1) ?? '';

it('q quit and ? help are on the hints line at 80×24, at every level, with a filter or a mark', async () => {
  const fx = board.fixture();
  makeJob(fx.state, { title: 'parser bug', changes: 1, iterations: 2, tested: true });
  const app = await board.render(fx, { columns: 80, rows: 24 });
  const { lastFrame, stdin } = app;
  const hintsEnd = async () => {
    const f = await frameWith(lastFrame, 'q quit');
    expect(lastLine(f)).toMatch(/\? help · q quit$/);
    expect(lastLine(f).length).toBeLessThanOrEqual(80);
  };
  await frameWith(lastFrame, 'parser bug');
  await hintsEnd();
  stdin.write('/');
  stdin.write('parser');
  stdin.write(KEY.enter);
  await frameWith(lastFrame, 'filter "parser" (esc clears)');
  await hintsEnd();
  stdin.write(KEY.enter);
  await frameWith(lastFrame, 'Impl');
  await hintsEnd();
  stdin.write(KEY.enter);
  await frameWith(lastFrame, 'change 1');
  stdin.write('m');
  await frameWith(lastFrame, 'marked 1.');
  await hintsEnd();
  stdin.write(KEY.enter);
  await frameWith(lastFrame, 'draft message:');
  await hintsEnd();
});

it('fitHints gives up hints from the end, never the kept ones', () => {
  const hints = keyHints('board', 'jobs');
  expect(fitHints('', hints, 200)).toBe(hints.map((h) => h.text).join(' · '));
  const narrow = fitHints('marked 1.1: d diffs against it', hints, 70);
  expect(narrow.length).toBeLessThanOrEqual(70);
  expect(narrow).toMatch(/^marked 1\.1: d diffs against it · .* · \? help · q quit$/);
  // Too narrow for anything else: the kept ones alone, for the terminal to cut.
  expect(fitHints('', hints, 10)).toBe('? help · q quit');
  // A lead too long for the line is cut before the kept hints are.
  expect(fitHints('x'.repeat(100), hints, 40)).toBe(`${'x'.repeat(21)}… · ? help · q quit`);
});

/**
 * The column names on the board, counts left out, in board order: the title
 * row's, and at a narrow width the empty columns' stacked "Name 0" lines
 * (a stack stands where its columns would, so its names come by position).
 */
function names(f: string): string[] {
  const rows = f.split('\n').slice(1, 12);
  const found: { x: number; y: number; name: string }[] = [];
  rows.forEach((row, y) => {
    for (const m of row.matchAll(/([A-Z][a-z]+)(?: \(\d+\)| 0\b|(?=\s{2}|$))/g))
      if (y === 0 || / 0$/.test(m[0])) found.push({ x: m.index, y, name: m[1]! });
  });
  return found.sort((a, b) => a.x - b.x || a.y - b.y).map((n) => n.name);
}

it('column names are chosen for the width and stay in order as jobs move between columns', async () => {
  const fx = board.fixture();
  const a = makeJob(fx.state, { title: 'alpha' });
  makeJob(fx.state, { title: 'beta' });
  let app = await board.render(fx, { columns: 80, rows: 24 });
  const { lastFrame } = app;
  const before = await frameWith(lastFrame, 'Impl (2)');
  expect(names(before)).toEqual(['Impl', 'Test', 'Rev', 'Commit', 'Done', 'Land', 'Fail', 'Aband']);
  fx.state.jobs.setStage(a.id, 'testing');
  fx.sync.refreshJobs();
  const after = await frameWith(lastFrame, 'Impl (1)', 'Test (1)');
  expect(names(after)).toEqual(names(before));
  fx.state.jobs.finish(a.id, 'failed', 'boom');
  fx.sync.refreshJobs();
  expect(names(await frameWith(lastFrame, 'Fail (1)'))).toEqual(names(before));
  app.unmount();
  app = await board.render(fx, { columns: 160, rows: 45 });
  const wide = await frameWith(app.lastFrame, 'Implementing (1)');
  expect(names(wide)).toEqual([
    'Implementing',
    'Testing',
    'Reviewing',
    'Committing',
    'Completed',
    'Landed',
    'Failed',
    'Abandoned',
  ]);
});

it('? help is grouped by what keys do, each key once per group', async () => {
  const sections = helpSections();
  expect(sections.map((s) => s.title)).toEqual([
    'Move',
    'Open and close',
    'Act on a job',
    'Answer a job that needs you',
    'Run the backlog',
    'View',
    'In a question, the filter box or the new-todo form',
  ]);
  for (const s of sections) {
    const keys = s.rows.map(([k]) => k);
    expect(new Set(keys).size, s.title).toBe(keys.length);
  }
  const fx = board.fixture();
  const app = await board.render(fx, { columns: 80, rows: 24 });
  await frameWith(app.lastFrame, 'Jobs');
  app.stdin.write('?');
  const f = await frameWith(app.lastFrame, 'Keys (esc closes)', 'Move', 'move up · scroll up (in a view)');
  // One row for ↑/k: a key that scrolls in a view is not listed a second time.
  expect(f.split('\n').filter((l) => /^\s+↑ k\s/.test(l))).toHaveLength(1);
  // Long descriptions wrap at 80 columns rather than lose their end.
  expect(f).toContain('tests with output,');
  expect(f).toContain('stages, reviews');
  expect(Math.max(...f.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
});

const LONG = 'Make the tokenizer keep quoted strings whole when they span several lines of input';

it('at 160×45 the live pane takes the rows the board does not need, and long titles wrap', async () => {
  const fx = board.fixture();
  for (let i = 0; i < 3; i++) makeJob(fx.state, { title: `job ${i}` });
  makeJob(fx.state, { title: LONG });
  const other = makeJob(fx.state, { title: `${LONG} (testing)`, stage: 'testing' });
  const app = await board.render(fx, { columns: 160, rows: 45 });
  // The live pane follows the selected job: jobs made in one millisecond
  // order by id, so which is the newest is not known beforehand.
  const job = selectedJob(fx.dash.getState())!;
  fx.dash.getState().setLive(
    job.id,
    Array.from({ length: 60 }, (_, i) => `agent line ${i + 1}`),
  );
  const { lastFrame } = app;
  const f = await frameWith(lastFrame, `live: ${shortJobId(job.id)}`, 'agent line 60');
  const lines = f.split('\n');
  expect(lines.length).toBeLessThanOrEqual(45);
  // The board keeps what its cards need, the pane gets the rest: 20 lines and more, not 7.
  const shown = lines.filter((l) => /agent line \d+/.test(l)).length;
  expect(shown).toBeGreaterThanOrEqual(20);
  // Both long titles are read to the end, on two lines.
  expect(f).toContain('several lines of input');
  expect(f).toContain('of input (testing)');
  expect(other.id).toBeTruthy();
});

it('at 80×24 long titles wrap to two lines when the board has room, the pane keeps its lines, q quit shows', async () => {
  const fx = board.fixture();
  const job = makeJob(fx.state, { title: LONG });
  makeJob(fx.state, { title: 'short one', stage: 'reviewing' });
  const app = await board.render(fx, { columns: 80, rows: 24 });
  const { lastFrame, stdin } = app;
  await frameWith(lastFrame, 'short one');
  // The long job is the newest; select it whatever the order.
  if (!(lastFrame() ?? '').includes(`live: ${shortJobId(job.id)}`)) stdin.write(KEY.left);
  fx.dash.getState().setLive(
    job.id,
    Array.from({ length: 30 }, (_, i) => `agent line ${i + 1}`),
  );
  const f = await frameWith(lastFrame, `live: ${shortJobId(job.id)}`, 'agent line 30');
  const lines = f.split('\n');
  expect(lines.length).toBeLessThanOrEqual(24);
  expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(80);
  expect(lines.filter((l) => /agent line \d+/.test(l)).length).toBeGreaterThanOrEqual(7);
  // The title's second line is on screen: more of it is read than one line holds.
  // (Which words end the second line depends on the column's width.)
  // The card is in the first column: a row's text up to the next column's.
  const titleLines = lines.filter((l) => {
    const cell = (l.split(/\s{2,}/)[0] ?? '').replace(/…$/, '');
    return !l.includes('── live') && cell.length > 5 && LONG.includes(cell);
  });
  expect(titleLines.length).toBe(2);
  expect(lastLine(f)).toMatch(/q quit$/);
});
