// `ii job diff --from C.I --to C.I`: any two iterations of a job compared,
// with the same summary and code diff as an iteration against the one before.
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { createElement } from 'react';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Dashboard } from '../../components/Dashboard.js';
import type { LoadedIterationDiff } from '../../src/history/iteration-diff.js';
import { createActions } from '../../src/dashboard/io/actions.js';
import { diffKey } from '../../src/dashboard/view/state.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { DashboardSync } from '../../src/dashboard/io/sync.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { frameWith, inputReady, KEY } from '../helpers/dash-fixture.js';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let fx: JobFixture;
let jobId: string;

beforeAll(() => {
  fx = new JobFixture('ii-diffpair-');
  fx.setup();
  const s = fx.scenario('three', {
    implement: [
      { actions: [write('a.txt', 'one\n'), write('b.txt', 'b\n')] },
      { actions: [write('a.txt', 'one\ntwo\n')] },
      { actions: [write('a.txt', 'one\ntwo\nthree\n'), write('c.txt', 'c\n')] },
    ],
    review: [
      verdict('REQUEST_CHANGES', 'Add "two".'),
      verdict('REQUEST_CHANGES', 'Add "three" and c.txt.'),
      verdict('ACCEPT', 'ok'),
    ],
  });
  const r = fx.run(['job', 'do', '--title', 'three iterations'], s);
  expect(r.code, r.stderr).toBe(0);
  jobId = jobIdFrom(r.stderr);
}, 300_000);
afterAll(() => fx.tmp.cleanup());

const json = (...args: string[]) => {
  const r = fx.run(['job', 'diff', jobId, ...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as LoadedIterationDiff;
};

it('--from 1.1 --to 1.3: what two iterations apart changed, in either order', () => {
  const d = json('--from', '1.1', '--to', '1.3');
  expect(d.from_iteration).toEqual({ change: 1, iteration: 1 });
  expect(d.iteration).toBe(3);
  expect(d.files_added).toEqual(['c.txt']);
  expect(d.files_modified).toEqual(['a.txt']);
  expect(d.diff).toContain('+two');
  expect(d.diff).toContain('+three');
  expect(d.diff).not.toContain('b.txt');
  expect(d.summary).toContain('iteration 1 → change 1, iteration 3');
  expect(d.usage_delta.input_tokens).toBeGreaterThanOrEqual(0);
  expect(json('--from', '1.3', '--to', '1.1')).toMatchObject({
    from_iteration: d.from_iteration,
    files_added: d.files_added,
    files_modified: d.files_modified,
    diff: d.diff,
  });
  const text = fx.run(['job', 'diff', jobId, '--from', '1.1', '--to', '1.3']);
  expect(text.code, text.stderr).toBe(0);
  expect(text.stdout).toContain('iteration 1.1 → 1.3');
  expect(text.stdout).toContain('+three');
});

it('bad specs: a clear error naming the flag and what exists', () => {
  const missing = fx.run(['job', 'diff', jobId, '--from', '9.9']);
  expect(missing.code).not.toBe(0);
  expect(missing.stderr).toContain('has no iteration 9.9 (--from): it has 1.1-1.3');
  const bad = fx.run(['job', 'diff', jobId, '--from', 'x']);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain("--from 'x' is not an iteration: give change.iteration");
  const both = fx.run(['job', 'diff', jobId, '--from', '1.1', '--iteration', '2']);
  expect(both.code).not.toBe(0);
  expect(both.stderr).toContain('not both');
});

it('the dashboard: m on 1.1, d on 1.3 shows the pair ii job diff --from 1.1 --to 1.3 prints', async () => {
  const state = openStateStore({ dir: join(fx.tmp.path, 'state', 'incrementum') });
  const dash = createDashboardStore({ repo: repoSlug(fx.repo), repoLabel: fx.repo, color: false });
  const sync = new DashboardSync({ state, dash });
  const actions = createActions({ state: asyncStore(state), dash, repoRoot: fx.repo, quit: () => {} });
  sync.loadAll();
  const app = render(createElement(Dashboard, { store: dash, actions, size: { columns: 120, rows: 40 } }));
  try {
    await inputReady(app);
    const { lastFrame, stdin } = app;
    await frameWith(lastFrame, 'three iterations');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'Committed (1)');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'Rejected (2)');
    stdin.write('m');
    await frameWith(lastFrame, 'marked 1.1');
    stdin.write(KEY.right);
    stdin.write('d');
    const cli = json('--from', '1.1', '--to', '1.3');
    const f = await frameWith(lastFrame, 'Diff of iterations 1.1 → 1.3', '+three', 'A c.txt', 'M a.txt');
    expect(f).toContain(`summary: ${cli.summary}`.slice(0, 60));
    const shown = dash.getState().diffs[diffKey(jobId, 1, 3, { change: 1, iteration: 1 })]!.loaded!;
    const pick = (d: LoadedIterationDiff) => ({
      from: d.from_iteration,
      added: d.files_added,
      modified: d.files_modified,
      removed: d.files_removed,
      usage: d.usage_delta,
      summary: d.summary,
      diff: d.diff,
    });
    expect(pick(shown)).toEqual(pick(cli));
  } finally {
    app.unmount();
    await sync.close();
    state.close();
  }
}, 120_000);
