// A live job recorded with no host (an older build's, still running across an
// upgrade) is counted the same way by the scheduler and the board's header
// (model/backlog-runner.ts takesRunnerSlot): in the slots of a runner's
// machine, not "elsewhere"; another machine's job stays elsewhere.
import { expect, it } from 'vitest';
import { takesRunnerSlot } from '../../src/model/backlog-runner.js';
import type { Job } from '../../src/model/job.js';
import { runLine } from '../../src/dashboard/view/run-line.js';

const job = (id: string, host: string | null) => ({ id, status: 'active', host }) as unknown as Job;

it('counts a hostless live job in a runner’s slots, as the scheduler does', () => {
  expect(takesRunnerSlot(null, 'here')).toBe(true);
  expect(takesRunnerSlot('here', 'here')).toBe(true);
  expect(takesRunnerSlot('there', 'here')).toBe(false);
  const line = runLine({
    jobs: [job('a', null), job('b', 'here'), job('c', 'there')],
    stale: {},
    backlog: { ready: [], blocked: [] } as unknown as Parameters<typeof runLine>[0]['backlog'],
    runner: { ids: [1], localPids: [], slots: 3, hosts: [{ host: 'here', slots: 3 }] },
  });
  expect(line?.full).toBe('run: 2/3 slots (+1 elsewhere) · 0 ready · 0 blocked');
});
