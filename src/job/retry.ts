// Retrying a job: a new job for the same todo, with retried_from pointing at
// the old one (whose history is kept). `ii job retry` runs it in the
// foreground; the dashboard starts it detached with spawnDetachedRetry.
import { join } from 'node:path';
import { UserError } from '../errors.js';
import type { Job } from '../model/job.js';
import { jobDir } from '../state/paths.js';
import { spawnDetachedIi, stamp } from './detached.js';

/** Throws a UserError when the job cannot be retried (it is still running). */
export function assertRetryable(job: Job, stale: boolean): void {
  if (job.status === 'active' && !stale)
    throw new UserError(
      `job ${job.id} is still running (${job.stage}); abandon it first: ii job abandon ${job.id}`,
    );
}

/**
 * Starts `ii job retry <job>` as a detached background process in the repo,
 * with the same state dir, its output appended to a log in the old job's
 * directory. Returns at once; the new job appears in the store.
 */
export function spawnDetachedRetry(
  jobId: string,
  repoRoot: string,
  stateDir: string,
): { pid: number; log: string } {
  const log = join(jobDir(stateDir, jobId), `retry-${stamp()}.log`);
  const { pid } = spawnDetachedIi(['job', 'retry', jobId], repoRoot, stateDir, log);
  return { pid, log };
}
