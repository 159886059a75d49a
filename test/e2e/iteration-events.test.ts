// The iteration lifecycle in the event log (iteration-history spec, phase 4):
// a real `ii job do` with the scripted agent logs iteration:started when an
// implement pass is recorded and iteration:completed when the iteration ends,
// each naming its change, its number and its commit as the job record has them.
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { readEvents } from '../../src/state/events.js';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';

let jf: JobFixture | null = null;
afterEach(() => {
  jf?.cleanup();
  jf = null;
});

it('logs iteration:started and iteration:completed with the change, iteration and commit', () => {
  jf = new JobFixture('ii-iter-');
  jf.setup(['test -f hello.txt'], { job: 'baseline-tests = false\n' });
  const s = jf.scenario('iterations', {
    implement: [
      { actions: [write('other.txt', 'x\n')] },
      { actions: [write('hello.txt', 'hi\n')] },
      { actions: [write('hello.txt', 'hi there\n')] },
    ],
    review: [verdict('REQUEST_CHANGES', 'Say more.'), verdict('ACCEPT', 'Good.')],
  });
  const r = jf.run(['job', 'do', '--title', 'say hello'], s);
  expect(r.code, r.stderr).toBe(0);
  const job = jf.show(jobIdFrom(r.stderr));
  const change = job.changes[0]!;
  expect(change.commits).toHaveLength(3);

  const { values, skipped } = readEvents(join(jf.env.XDG_STATE_HOME!, 'incrementum'), job.id);
  expect(skipped).toEqual([]);
  const lifecycle: Record<string, unknown>[] = values.flatMap((e) =>
    e.type === 'iteration:started' || e.type === 'iteration:completed'
      ? [
          {
            type: e.type,
            change_id: e.change_id,
            change: e.change_number,
            iteration: e.iteration,
            commit_id: e.commit_id,
            ...('outcome' in e ? { outcome: e.outcome } : {}),
          },
        ]
      : [],
  );
  type Commit = (typeof change.commits)[number] & { iteration_commit_id?: string };
  const [c1, c2, c3] = change.commits as [Commit, Commit, Commit];
  expect(c3.iteration_commit_id).toMatch(/^[0-9a-f]{40}$/);
  const at = { change_id: change.change_id, change: 1 };
  expect(lifecycle).toEqual([
    { type: 'iteration:started', ...at, iteration: 1, commit_id: c1.commit_id },
    { type: 'iteration:completed', ...at, iteration: 1, commit_id: c1.commit_id, outcome: 'tests_failed' },
    { type: 'iteration:started', ...at, iteration: 2, commit_id: c2.commit_id },
    {
      type: 'iteration:completed',
      ...at,
      iteration: 2,
      commit_id: c2.commit_id,
      outcome: 'changes_requested',
    },
    // Started as the iteration's own commit; completed as the final one the commit stage made.
    { type: 'iteration:started', ...at, iteration: 3, commit_id: c3.iteration_commit_id },
    { type: 'iteration:completed', ...at, iteration: 3, commit_id: c3.commit_id, outcome: 'committed' },
  ]);
  // Each start comes before its iteration's tests, each end after its verdict.
  const index = (pred: (e: (typeof values)[number]) => boolean) => values.findIndex(pred);
  expect(index((e) => e.type === 'iteration:started')).toBeLessThan(index((e) => e.type === 'test_start'));
  expect(index((e) => e.type === 'iteration:completed' && e.outcome === 'committed')).toBeGreaterThan(
    index((e) => e.type === 'committed'),
  );
});
