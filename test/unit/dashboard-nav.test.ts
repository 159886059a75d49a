// The dashboard's screen state as a pure reducer: every action of reduceNav,
// and keepSelection pinning the cursor to its card while the board changes,
// on states built from jobs written with the real store's API (no screen).
import { afterAll, describe, expect, it } from 'vitest';
import { cursor, selectedJob } from '../../src/dashboard/view/board.js';
import { keepSelection, reduceNav, sanitizeNav } from '../../src/dashboard/view/nav.js';
import { EMPTY_BACKLOG, initialNav, type DashboardState, type Nav } from '../../src/dashboard/view/state.js';
import type { Job } from '../../src/model/job.js';
import { openStateStore } from '../../src/state/index.js';
import { makeJob, REPO } from '../helpers/dash-fixture.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir('ii-nav-');
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

/** A dashboard state over these jobs (newest first, as the store lists them). */
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

const sel = (col: number, row: number, key: string | null = null) => ({ col, row, key });
const at = (s: DashboardState, nav: Nav): DashboardState => ({ ...s, nav });

describe('reduceNav: moving the cursor', () => {
  const b = job('second implementing');
  const a = job('first implementing');
  const r = job('reviewing one', { stage: 'reviewing' });
  const jobs = [r, a, b]; // Implementing: a, b; Testing: none; Reviewing: r

  it('down and up move within a column and stop at its ends, naming the card reached', () => {
    const s = state(jobs);
    const down = reduceNav(s, { type: 'move', dir: 'down' });
    expect(down.sel.jobs).toEqual(sel(0, 1, b.id));
    const again = reduceNav(at(s, down), { type: 'move', dir: 'down' });
    expect(again.sel.jobs).toEqual(sel(0, 1, b.id));
    const up = reduceNav(at(s, again), { type: 'move', dir: 'up' });
    expect(up.sel.jobs).toEqual(sel(0, 0, a.id));
    expect(reduceNav(at(s, up), { type: 'move', dir: 'up' }).sel.jobs).toEqual(sel(0, 0, a.id));
  });

  it('right skips an empty column and keeps the row within the column reached', () => {
    const s = state(jobs, { sel: { ...initialNav().sel, jobs: sel(0, 1, b.id) } });
    const right = reduceNav(s, { type: 'move', dir: 'right' });
    expect(right.sel.jobs).toEqual(sel(2, 0, r.id));
    const left = reduceNav(at(s, right), { type: 'move', dir: 'left' });
    expect(left.sel.jobs).toEqual(sel(0, 0, a.id));
  });

  it('at either end of the board the cursor stays on a card', () => {
    const s = state(jobs);
    expect(reduceNav(s, { type: 'move', dir: 'left' }).sel.jobs).toEqual(sel(0, 0, a.id));
    const last = at(s, reduceNav(s, { type: 'move', dir: 'right' }));
    const past = at(s, reduceNav(last, { type: 'move', dir: 'right' }));
    // Nothing with cards further right: the cursor may sit on an empty column, but shows the last card.
    expect(selectedJob(past)?.id).toBe(r.id);
  });

  it('an empty board moves nowhere and selects nothing', () => {
    const s = state([]);
    for (const dir of ['up', 'down', 'left', 'right'] as const) {
      const n = reduceNav(s, { type: 'move', dir });
      expect(n.sel.jobs.key).toBeNull();
      expect(cursor(at(s, n)).row).toBe(0);
      expect(selectedJob(at(s, n))).toBeUndefined();
    }
  });
});

describe('reduceNav: drilling and going back', () => {
  const j = job('two changes', { changes: 2, iterations: 2 });
  const jobs = [j];

  it('enter goes jobs → changes → commits → detail, each level starting at its first card', () => {
    const s = state(jobs, { scroll: 4 });
    const changes = reduceNav(s, { type: 'drill' });
    expect(changes).toMatchObject({
      level: 'changes',
      jobId: j.id,
      change: null,
      iteration: null,
      scroll: 0,
    });
    expect(changes.sel.changes).toEqual(sel(0, 0));
    const commits = reduceNav(at(s, changes), { type: 'drill' });
    expect(commits.level).toBe('commits');
    expect(commits.change).not.toBeNull();
    expect(commits.sel.commits).toEqual(sel(0, 0));
    const detail = reduceNav(at(s, commits), { type: 'drill' });
    expect(detail.level).toBe('detail');
    expect(detail.iteration).not.toBeNull();
    // Nothing below the detail.
    expect(reduceNav(at(s, detail), { type: 'drill' })).toBe(detail);
  });

  it('enter on an empty board changes nothing', () => {
    const s = state([]);
    expect(reduceNav(s, { type: 'drill' })).toBe(s.nav);
    const noChanges = job('no changes yet');
    const drilled = state([noChanges], { level: 'changes', jobId: noChanges.id });
    expect(reduceNav(drilled, { type: 'drill' })).toBe(drilled.nav);
  });

  it('esc clears a mark first, then goes up one level at a time, then clears the filter', () => {
    const mark = { jobId: j.id, change: 1, iteration: 1 };
    const s = state(jobs, {
      level: 'detail',
      jobId: j.id,
      change: 1,
      iteration: 0,
      fullOutput: true,
      mark,
      filter: 'two',
    });
    const unmarked = reduceNav(s, { type: 'back' });
    expect(unmarked).toMatchObject({ level: 'detail', mark: null });
    const commits = reduceNav(at(s, unmarked), { type: 'back' });
    expect(commits).toMatchObject({ level: 'commits', change: 1, iteration: null, fullOutput: false });
    const changes = reduceNav(at(s, commits), { type: 'back' });
    expect(changes).toMatchObject({ level: 'changes', jobId: j.id, change: null });
    const top = reduceNav(at(s, changes), { type: 'back' });
    expect(top).toMatchObject({ level: 'jobs', jobId: null, filter: 'two' });
    const cleared = reduceNav(at(s, top), { type: 'back' });
    expect(cleared.filter).toBe('');
    expect(reduceNav(at(s, cleared), { type: 'back' })).toBe(cleared);
  });

  it('[ and ] step to the change before or after, keeping the mark, and stop at the first and last', () => {
    const mark = { jobId: j.id, change: 2, iteration: 1 };
    const s = state(jobs, {
      level: 'commits',
      jobId: j.id,
      change: 1,
      mark,
      sel: { ...initialNav().sel, commits: sel(1, 0, '1') },
    });
    const prev = reduceNav(s, { type: 'changeStep', delta: -1 });
    expect(prev).toMatchObject({ change: 0, mark, scroll: 0 });
    expect(prev.sel.commits).toEqual(sel(0, 0));
    expect(reduceNav(at(s, prev), { type: 'changeStep', delta: -1 })).toBe(prev);
    expect(reduceNav(s, { type: 'changeStep', delta: 1 })).toBe(s.nav);
    // Only on the commits board.
    const changes = state(jobs, { level: 'changes', jobId: j.id });
    expect(reduceNav(changes, { type: 'changeStep', delta: 1 })).toBe(changes.nav);
  });

  it('a drilled-into job that disappeared sends the view back to the jobs board', () => {
    const s = state([], { level: 'commits', jobId: j.id, change: 0 });
    expect(sanitizeNav(s)).toMatchObject({ level: 'jobs', jobId: null });
    const here = state(jobs, { level: 'commits', jobId: j.id, change: 0 });
    expect(sanitizeNav(here)).toBe(here.nav);
  });
});

describe('reduceNav: overlays, confirmations, the filter and the rest', () => {
  const s = state([]);
  const run = (nav: Partial<Nav>, ...actions: Parameters<typeof reduceNav>[1][]) =>
    actions.reduce((n, a) => reduceNav(at(s, n), a), { ...s.nav, ...nav });

  it('an overlay opens at the top, the same key closes it, another key switches to its own', () => {
    expect(run({ scroll: 3 }, { type: 'overlay', overlay: 'logs' })).toMatchObject({
      overlay: 'logs',
      scroll: 0,
    });
    expect(
      run({}, { type: 'overlay', overlay: 'logs' }, { type: 'overlay', overlay: 'logs' }).overlay,
    ).toBeNull();
    expect(run({}, { type: 'overlay', overlay: 'logs' }, { type: 'overlay', overlay: 'help' }).overlay).toBe(
      'help',
    );
    expect(run({ overlay: 'diff', scroll: 9 }, { type: 'closeOverlay' })).toMatchObject({
      overlay: null,
      scroll: 0,
    });
  });

  it('a confirmation opens and closes', () => {
    const confirm = { prompt: 'abandon?', action: 'abandon', jobId: 'x' } as unknown as NonNullable<
      Nav['confirm']
    >;
    expect(run({}, { type: 'confirm', confirm }).confirm).toBe(confirm);
    expect(run({}, { type: 'confirm', confirm }, { type: 'closeConfirm' }).confirm).toBeNull();
  });

  it('the filter takes text and backspace, is kept on enter and dropped on esc', () => {
    const typed = run(
      {},
      { type: 'filterStart' },
      { type: 'filterInput', text: 'ab' },
      { type: 'filterInput', text: 'c' },
      { type: 'filterBackspace' },
    );
    expect(typed).toMatchObject({ filtering: true, filter: 'ab' });
    expect(reduceNav(at(s, typed), { type: 'filterAccept' })).toMatchObject({
      filtering: false,
      filter: 'ab',
    });
    expect(reduceNav(at(s, typed), { type: 'filterCancel' })).toMatchObject({ filtering: false, filter: '' });
    expect(run({ filter: '' }, { type: 'filterBackspace' }).filter).toBe('');
  });

  it('toggles flip; scrolling stops at the top; a mark is set and cleared', () => {
    expect(run({}, { type: 'toggleFinished' }).showFinished).toBe(!s.nav.showFinished);
    expect(run({}, { type: 'toggleFinished' }, { type: 'toggleFinished' }).showFinished).toBe(
      s.nav.showFinished,
    );
    expect(run({}, { type: 'toggleOutput' }).fullOutput).toBe(!s.nav.fullOutput);
    expect(run({ scroll: 2 }, { type: 'scroll', delta: 5 }).scroll).toBe(7);
    expect(run({ scroll: 2 }, { type: 'scroll', delta: -5 }).scroll).toBe(0);
    const mark = { jobId: 'j', change: 1, iteration: 2 };
    expect(run({}, { type: 'mark', mark }).mark).toEqual(mark);
    expect(run({ mark }, { type: 'mark', mark: null }).mark).toBeNull();
  });
});

describe('keepSelection', () => {
  const old = job('was here first');

  it('a cursor never moved stays on its job when a new job appears above it', () => {
    const prev = state([old]);
    expect(prev.nav.sel.jobs.key).toBeNull();
    const newcomer = job('arrived later');
    const next = state([newcomer, old]);
    // Unpinned, the same position now holds the newcomer: a or r would act on it.
    expect(selectedJob(next)?.id).toBe(newcomer.id);
    const kept = at(next, keepSelection(prev, next));
    expect(kept.nav.sel.jobs).toEqual(sel(0, 0, old.id));
    expect(selectedJob(kept)?.id).toBe(old.id);
    expect(cursor(kept)).toEqual({ col: 0, row: 1 });
  });

  it('a cursor already on a card, a level change and an empty board leave the next state as it is', () => {
    const pinned = state([old], { sel: { ...initialNav().sel, jobs: sel(0, 0, old.id) } });
    const next = state([job('another'), old], { sel: pinned.nav.sel });
    expect(keepSelection(pinned, next)).toBe(next.nav);
    const drilled = state([old], { level: 'changes', jobId: old.id });
    expect(keepSelection(state([old]), drilled)).toBe(drilled.nav);
    const empty = state([]);
    expect(keepSelection(empty, state([old]))).toEqual(state([old]).nav);
  });

  it('a job that moves to another column keeps the cursor once it is pinned', () => {
    const moving = job('moves on');
    const before = state([moving, old]);
    const pinned = at(before, keepSelection(before, state([moving, old])));
    expect(pinned.nav.sel.jobs.key).toBe(moving.id);
    store.jobs.setStage(moving.id, 'testing');
    const after = at(state([store.jobs.get(moving.id)!, old]), pinned.nav);
    expect(cursor(after)).toEqual({ col: 1, row: 0 });
    expect(selectedJob(after)?.id).toBe(moving.id);
  });
});
