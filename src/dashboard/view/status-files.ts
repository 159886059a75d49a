// The status bar's file count (the file-tracking spec's "modified files count
// in status bar during iteration"): the current iteration's files, with the
// job's total beside it, which `f` lists.
import { recordedFiles } from '../../model/derive.js';
import type { Job } from '../../model/job.js';
import type { DashboardState } from './state.js';

export interface StatusFiles {
  /** Files of the iteration the count is of. */
  count: number;
  /** Which iteration: the running job's current one, or a finished job's last. */
  scope: 'this iteration' | 'last iteration';
  /** Files of the whole job, as `f` lists them. */
  total: number;
}

/** The last recorded iteration's files (a change opened with no iteration yet has none of its own). */
function lastRecordedIteration(job: Job): number {
  for (let c = job.changes.length - 1; c >= 0; c--) {
    const last = job.changes[c]!.commits.at(-1);
    if (last) return last.files.length;
  }
  return 0;
}

export function statusFiles(
  s: Pick<DashboardState, 'files' | 'iterationFiles'>,
  job: Job | null | undefined,
): StatusFiles | null {
  if (!job) return null;
  // The tracker's live reports while the board has them; the record once they are gone.
  const live = s.iterationFiles[job.id];
  return {
    count: live ? live.length : lastRecordedIteration(job),
    scope: job.status === 'active' ? 'this iteration' : 'last iteration',
    total: s.files[job.id]?.length || recordedFiles(job).length,
  };
}
