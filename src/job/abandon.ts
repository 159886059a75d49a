// Abandoning a job from outside its runner. A live runner is asked through a
// control request (it is the only writer of its job); a job whose runner is
// gone (stale) is cleaned up directly.
import { UserError } from '../errors.js';
import { isStale } from '../model/derive.js';
import type { ControlRequest, Job } from '../model/job.js';
import type { StateStore } from '../state/api.js';
import { appendEvent } from '../state/events.js';

export interface StaleProbe {
  host: string;
  pidAlive: (pid: number) => boolean;
}

export type AbandonResult = { kind: 'requested'; request: ControlRequest } | { kind: 'cleaned'; job: Job };

/**
 * Abandons an active job: a control request for a live runner, or, for a
 * stale job, marks it abandoned and releases its session (workspace freed,
 * todo reopened) through `finishSession`.
 */
export async function abandonJob(
  store: StateStore,
  stateDir: string,
  job: Job,
  opts: {
    reason?: string;
    probe: StaleProbe;
    finishSession: (sessionId: string) => Promise<void>;
    now?: number;
  },
): Promise<AbandonResult> {
  if (job.status !== 'active')
    throw new UserError(`job ${job.id} is already ${job.status}: nothing to abandon.`);
  const reason = opts.reason ?? 'abandoned on request';
  if (!isStale(job, opts.now ?? Date.now(), opts.probe))
    return { kind: 'requested', request: store.control.request(job.id, 'abandon', reason) };
  const done = store.jobs.finish(job.id, 'abandoned', `${reason} (its runner was gone)`);
  appendEvent(stateDir, job.id, 'stage', { status: 'abandoned', reason: done.failure_reason });
  if (job.session_id) await opts.finishSession(job.session_id);
  else if (store.todos.get(job.repo, job.todo_id)?.status === 'in_progress')
    store.todos.setStatus(job.repo, job.todo_id, 'open');
  return { kind: 'cleaned', job: store.jobs.get(job.id) ?? done };
}
