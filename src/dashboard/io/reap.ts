// What the board does with a job it finds stale: when its runner is
// provably gone (this machine, its pid dead), it is cleaned up here as
// prune would (failed, its todo reopened, its workspace freed), and the
// board says so; another machine's stale job is only shown stale.
import type { Job } from '../../model/job.js';
import type { AsyncStateStore } from '../../state/async-api.js';
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
