// Abandoning a job from outside its runner. A live runner is asked through a
// control request (it is the only writer of its job); a job whose runner is
// gone (stale) is cleaned up directly.
import { UserError } from '../errors.js';
import { isStale } from '../model/derive.js';
import type { ControlRequest, Job } from '../model/job.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { cleanUpDeadRunner, runnerGoneIn, type DeadRunnerCleanup } from './dead-runner.js';

export interface StaleProbe {
  host: string;
  pidAlive: (pid: number) => boolean;
}

export type AbandonResult =
  { kind: 'requested'; request: ControlRequest } | { kind: 'cleaned'; job: Job; cleanup: DeadRunnerCleanup };

/**
 * Abandons an active job: a control request for a live runner, or, for a
 * stale job, ends what its runner left running, marks it abandoned and
 * releases its session (workspace freed, todo reopened) through `finishSession`.
 */
export async function abandonJob(
  store: AsyncStateStore,
  stateDir: string,
  job: Job,
  opts: {
    reason?: string;
    probe: StaleProbe;
    finishSession: (sessionId: string) => Promise<void>;
    now?: number;
    /**
     * Close the job's todo too, so no runner starts it again. Closed before
     * the job ends: its end reopens a todo only while it is in progress, so
     * the todo is never open in between for a runner to take.
     */
    closeTodo?: boolean;
  },
): Promise<AbandonResult> {
  if (job.status !== 'active')
    throw new UserError(`job ${job.id} is already ${job.status}: nothing to abandon.`);
  if (opts.closeTodo) await store.todos.close(job.repo, job.todo_id, { whileHeld: true });
  const reason = opts.reason ?? 'abandoned on request';
  // Stale, or its pid now names another process (reused): its runner is gone.
  if (!isStale(job, opts.now ?? Date.now(), opts.probe) && !(await runnerGoneIn(store, job)))
    return { kind: 'requested', request: await store.control.request(job.id, 'abandon', reason) };
  const cleanup = await cleanUpDeadRunner(store, stateDir, job, {
    status: 'abandoned',
    reason: `${reason} (its runner was gone)`,
    finishSession: opts.finishSession,
  });
  if (!cleanup.endedHere)
    throw new UserError(
      `job ${job.id} was ended meanwhile by another process (${cleanup.job.status}${cleanup.job.failure_reason ? `: ${cleanup.job.failure_reason}` : ''}); nothing to abandon.`,
    );
  return { kind: 'cleaned', job: cleanup.job, cleanup };
}
