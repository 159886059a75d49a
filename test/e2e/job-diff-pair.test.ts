// `ii job diff --from C.I --to C.I`: any two iterations of a job compared,
// with the same summary and code diff as an iteration against the one before.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LoadedIterationDiff } from '../../src/history/iteration-diff.js';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';

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
