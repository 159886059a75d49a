// Retrying a job: a new job for the same todo, with retried_from pointing at
// the old one (whose history is kept). `ii job retry` runs it in the
// foreground; the dashboard starts it detached with spawnDetachedRetry.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UserError } from '../errors.js';
import type { Job } from '../model/job.js';
import { iiBin } from '../package-root.js';
import { jobDir } from '../state/paths.js';

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
  const log = join(jobDir(stateDir, jobId), `retry-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
  mkdirSync(dirname(log), { recursive: true, mode: 0o700 });
  const fd = openSync(log, 'a', 0o600);
  try {
    // The state dir is $XDG_STATE_HOME/incrementum: hand the same one down.
    const env = { ...process.env };
    if (basename(stateDir) === 'incrementum') env.XDG_STATE_HOME = dirname(stateDir);
    const child = spawn(process.execPath, [iiBin(), 'job', 'retry', jobId], {
      cwd: repoRoot,
      env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    child.on('error', () => {});
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ii job retry ${jobId}`);
    return { pid: child.pid, log };
  } finally {
    closeSync(fd);
  }
}
