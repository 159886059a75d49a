// What the board does with a job it finds stale: when its runner is
// provably gone (this machine, its pid dead), it is cleaned up here as
// prune would (failed, its todo reopened, its workspace freed), and the
// board says so; another machine's stale job is only shown stale. So is a
// todo left in progress by a runner killed after its job ended.
import type { Job } from '../../model/job.js';
import type { AsyncStateStore } from '../../state/async-api.js';
import type { EndSession } from '../../job/stranded.js';
import type { DashboardStore } from '../view/store.js';
import { releaseSession } from './actions.js';

/** SyncOptions.reap for the board of `dash` on `state`. */
export function boardReaper(state: AsyncStateStore, dash: DashboardStore): (job: Job) => Promise<void> {
  return async (job) => {
    const { reapDeadRunner, reapedLine } = await import('../../job/dead-runner.js');
    const c = await reapDeadRunner(state, job.id, { by: 'the board', finishSession: releaseSession(state) });
    if (c) dash.getState().setMessage(reapedLine(c));
  };
}

/**
 * SyncOptions.settle for the board of `dash` on `state`: the session a gone
 * runner left active after its job ended, ended through `endSession` as that
 * runner would have (job/stranded.ts), and the board says so. The cleanup
 * is loaded when there is one.
 */
export function boardSettler(
  state: AsyncStateStore,
  dash: DashboardStore,
  endSession: EndSession,
): (jobId: string) => Promise<void> {
  return async (jobId) => {
    const { settleStranded, settledLine } = await import('../../job/stranded.js');
    const s = await settleStranded(state, jobId, endSession);
    if (s) dash.getState().setMessage(settledLine(s));
  };
}
