// `ii job diff` and the dashboard's diff view show one iteration diff, loaded
// one way (src/history's loadIterationDiff). The dashboard once built its
// file list from the iteration snapshots (the change's files so far) and its
// code diff from a bare `git diff` that kept the protocol files, so the two
// disagreed: "2 modified" on screen where `ii job diff` said 1.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LoadedIterationDiff } from '../../src/history/iteration-diff.js';
import { createActions } from '../../src/dashboard/io/actions.js';
import { diffKey } from '../../src/dashboard/view/state.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let fx: JobFixture;
let jobId: string;

beforeAll(() => {
  fx = new JobFixture('ii-diffparity-');
  fx.setup();
  // Iteration 1 adds two files; iteration 2 touches only one of them.
  const s = fx.scenario('two', {
    implement: [
      { actions: [write('a.txt', 'one\n'), write('b.txt', 'b\n')] },
      { actions: [write('a.txt', 'one\ntwo\n')] },
    ],
    review: [verdict('REQUEST_CHANGES', 'Add "two" to a.txt.'), verdict('ACCEPT', 'ok')],
  });
  const r = fx.run(['job', 'do', '--title', 'two files'], s);
  expect(r.code, r.stderr).toBe(0);
  jobId = jobIdFrom(r.stderr);
}, 300_000);
afterAll(() => fx.tmp.cleanup());

const lists = (
  d: Pick<LoadedIterationDiff, 'files_added' | 'files_modified' | 'files_removed' | 'diff'>,
) => ({
  added: d.files_added,
  modified: d.files_modified,
  removed: d.files_removed,
  diff: d.diff,
});

it('the dashboard’s diff of every iteration is the one ii job diff prints', async () => {
  const state = openStateStore({ dir: join(fx.tmp.path, 'state', 'incrementum') });
  try {
    const dash = createDashboardStore({ repo: repoSlug(fx.repo), repoLabel: fx.repo });
    const actions = createActions({ state: asyncStore(state), dash, repoRoot: fx.repo, quit: () => {} });
    const cli = (i: number) => {
      const r = fx.run(['job', 'diff', jobId, '--iteration', String(i), '--json']);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as LoadedIterationDiff;
    };
    const shown = [];
    for (const i of [1, 2]) {
      await actions.loadDiff(jobId, 1, i);
      const d = dash.getState().diffs[diffKey(jobId, 1, i)];
      expect(d?.error ?? null).toBeNull();
      expect(lists(d!.loaded!)).toEqual(lists(cli(i)));
      shown.push(lists(d!.loaded!));
    }
    expect(shown[0]!.added).toEqual(['a.txt', 'b.txt']);
    // Only a.txt changed in the second iteration: b.txt is not "modified".
    expect(shown[1]).toMatchObject({ added: [], modified: ['a.txt'], removed: [] });
    expect(shown[1]!.diff).not.toContain('.incrementum-');
  } finally {
    state.close();
  }
}, 120_000);
