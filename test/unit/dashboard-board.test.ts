// The board layout of each level, the cursor on it, and boardColumns' memo:
// pure functions of the dashboard's state, over jobs written with the real
// store's API.
import { afterAll, describe, expect, it } from 'vitest';
import { boardColumns, cursor, jobCounts, selectedCard } from '../../src/dashboard/view/board.js';
import { waitingCount } from '../../src/dashboard/view/needs-you.js';
import { diffTarget } from '../../src/dashboard/view/diff-request.js';
import { EMPTY_BACKLOG, initialNav, type DashboardState, type Nav } from '../../src/dashboard/view/state.js';
import { CHANGE_COLUMNS, COMMIT_COLUMNS, JOB_COLUMNS } from '../../src/model/derive.js';
import type { Job } from '../../src/model/job.js';
import { openStateStore } from '../../src/state/index.js';
import { makeJob, REPO } from '../helpers/dash-fixture.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir('ii-board-');
const store = openStateStore({ dir: tmp.path });
afterAll(() => {
  store.close();
  tmp.cleanup();
});

const titles: Record<string, string> = {};
function job(title: string, o: Parameters<typeof makeJob>[1] = {}): Job {
  const j = makeJob(store, { ...o, title });
  titles[j.todo_id] = title;
  return j;
}

function state(jobs: Job[], nav: Partial<Nav> = {}, backlog = EMPTY_BACKLOG): DashboardState {
  return {
    repo: REPO,
    repoLabel: '/src/demo',
    banner: null,
    jobs,
    todoTitles: titles,
    backlog,
    runner: null,
    stale: {},
    live: {},
    files: {},
    iterationFiles: {},
    records: {},
    diffs: {},
    nav: { ...initialNav(), ...nav },
    logSize: { width: 80, height: 20 },
    message: null,
    color: false,
  };
}

const layout = (s: DashboardState) => boardColumns(s).map((c) => [c.title, c.cards.map((k) => k.key)]);
const ACTIVE = JOB_COLUMNS.filter((c) => !['Completed', 'Landed', 'Failed', 'Abandoned'].includes(c));

describe('boardColumns', () => {
  const impl = job('alpha implementing');
  const test = job('beta testing', { stage: 'testing' });
  const done = job('gamma done', { finish: 'completed' });
  const jobs = [done, test, impl];

  it('an empty board has every active column, each empty, and no card under the cursor', () => {
    const s = state([], { showFinished: false });
    expect(layout(s)).toEqual(ACTIVE.map((t) => [t, []]));
    expect(cursor(s)).toEqual({ col: 0, row: 0 });
    expect(selectedCard(s)).toBeUndefined();
  });

  it('places active jobs by stage and hides finished ones until asked', () => {
    expect(layout(state(jobs, { showFinished: false }))).toEqual(
      ACTIVE.map((t) => [t, t === 'Implementing' ? [impl.id] : t === 'Testing' ? [test.id] : []]),
    );
    const all = layout(state(jobs, { showFinished: true }));
    expect(all.map(([t]) => t)).toEqual([...JOB_COLUMNS]);
    expect(all.find(([t]) => t === 'Completed')![1]).toEqual([done.id]);
  });

  it('the filter keeps only the jobs whose title matches', () => {
    expect(layout(state(jobs, { filter: 'BETA' })).flatMap(([, keys]) => keys)).toEqual([test.id]);
    expect(layout(state(jobs, { filter: 'nothing like it' })).flatMap(([, keys]) => keys)).toEqual([]);
  });

  it("below the jobs: a job's changes, then one change's iterations (also under the detail)", () => {
    const j = job('three changes', { changes: 3, iterations: 2, tested: true, review: 'ACCEPT' });
    const changes = boardColumns(state([j], { level: 'changes', jobId: j.id }));
    expect(changes.map((c) => c.title)).toEqual([...CHANGE_COLUMNS]);
    expect(changes.flatMap((c) => c.cards.map((k) => k.key)).sort()).toEqual(['0', '1', '2']);
    const commits = boardColumns(state([j], { level: 'commits', jobId: j.id, change: 1 }));
    expect(commits.map((c) => c.title)).toEqual([...COMMIT_COLUMNS]);
    expect(commits.flatMap((c) => c.cards.map((k) => k.key)).sort()).toEqual(['0', '1']);
    const detail = state([j], { level: 'detail', jobId: j.id, change: 1, iteration: 0 });
    expect(layout(detail)).toEqual(commits.map((c) => [c.title, c.cards.map((k) => k.key)]));
  });

  // job-change-tracking.md, Implementing Stage: every pass starts its change
  // on the record, so a job's last change may have no commit.
  it('spec Implementing Stage: a change with no commit has a card saying why, and counts as no change made', () => {
    const j = job('nothing more', { changes: 1, tested: true, review: 'ACCEPT' });
    store.jobs.appendChange(j.id, `Iempty${j.id}`);
    store.jobs.finish(j.id, 'completed');
    const done = store.jobs.get(j.id)!;
    const card = (s: DashboardState, title: string) =>
      boardColumns(s)
        .flatMap((c) => c.cards.map((k) => [c.title, k] as const))
        .find(([, k]) => k.title.includes(title));
    const [, jobCard] = card(state([done], { showFinished: true }), 'nothing more')!;
    expect(jobCard.detail).toMatch(/^1 change\b/);
    const [col, changeCard] = card(state([done], { level: 'changes', jobId: j.id }), 'Iempty')!;
    expect(col).toBe('Abandoned');
    expect(changeCard.detail).toBe(
      '0 iter · no commit: the last implement pass found nothing more to change',
    );
    // `d` on the job's card shows its last iteration, not the empty change.
    expect(diffTarget(state([done], { showFinished: true }))).toMatchObject({ change: 1, iteration: 1 });
  });

  it('returns the same columns while its inputs are the same, and new ones when one changes', () => {
    const s = state(jobs);
    const first = boardColumns(s);
    expect(boardColumns({ ...s, nav: { ...s.nav, scroll: 5 } })).toBe(first);
    expect(boardColumns({ ...s, nav: { ...s.nav, filter: 'a' } })).not.toBe(first);
    expect(boardColumns({ ...s, jobs: [...jobs] })).not.toBe(first);
  });

  it('keeps one memo per store: two stores taking turns do not rebuild each other', () => {
    const a = state([impl]);
    const b = state([test]);
    const colsA = boardColumns(a);
    const colsB = boardColumns(b);
    expect(boardColumns(a)).toBe(colsA);
    expect(boardColumns(b)).toBe(colsB);
  });
});

describe("the status line's counts", () => {
  const a = job('delta implementing');
  const b = job('epsilon done', { finish: 'completed' });
  const jobs = [a, b];

  // A keypress runs every selector: counting 10,000 jobs again for each was
  // half of a keypress's CPU at 10,000 jobs (bench/dashboard.bench.js).
  it('counts once per jobs array and stale map, and again when either is a new one', () => {
    const first = jobCounts(jobs, {});
    expect(first).toEqual({ active: 1, stale: 0, completed: 1, failed: 0, abandoned: 0 });
    const stale = {};
    const kept = jobCounts(jobs, stale);
    expect(jobCounts(jobs, stale)).toBe(kept);
    expect(jobCounts(jobs, { [a.id]: true })).toEqual({
      active: 0,
      stale: 1,
      completed: 1,
      failed: 0,
      abandoned: 0,
    });
    expect(jobCounts([a], stale)).toEqual({ active: 1, stale: 0, completed: 0, failed: 0, abandoned: 0 });
    expect(jobCounts(jobs, stale)).not.toBe(kept);
  });

  it('the waiting count follows a new jobs array with a job asking', () => {
    expect(waitingCount(jobs)).toBe(0);
    const asking: Job = {
      ...a,
      asking: {
        id: 'r1',
        tool_kind: 'execute',
        title: 'run',
        command: 'npm test',
        paths: [],
        asked_at: new Date().toISOString(),
      } as unknown as Job['asking'],
    };
    expect(waitingCount([asking, b])).toBe(1);
    expect(waitingCount(jobs)).toBe(0);
  });
});

describe('cursor', () => {
  const one = job('one');
  const two = job('two');
  const rev = job('in review', { stage: 'reviewing' });
  const jobs = [two, one, rev];
  const withSel = (col: number, row: number, key: string | null = null) =>
    state(jobs, { sel: { ...initialNav().sel, jobs: { col, row, key } } });

  it('clamps a position past the end of a column to its last card', () => {
    expect(cursor(withSel(0, 9))).toEqual({ col: 0, row: 1 });
    expect(cursor(withSel(-3, 0))).toEqual({ col: 0, row: 0 });
    expect(cursor(withSel(99, 0))).toEqual({ col: 2, row: 0 });
  });

  it('an empty column holds no cursor: the nearest column with cards does', () => {
    // Equally near on both sides: the one to the right.
    expect(cursor(withSel(1, 0))).toEqual({ col: 2, row: 0 });
    expect(cursor(withSel(1, 1))).toEqual({ col: 2, row: 0 });
    expect(cursor(withSel(3, 0))).toEqual({ col: 2, row: 0 });
  });

  it('follows its card to wherever it moved, and falls back to the position once the card is gone', () => {
    expect(cursor(withSel(0, 0, rev.id))).toEqual({ col: 2, row: 0 });
    expect(cursor(withSel(0, 1, 'gone'))).toEqual({ col: 0, row: 1 });
  });
});
