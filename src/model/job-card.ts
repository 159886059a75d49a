// What the board holds of a job it does not show in detail: the job's own
// fields, its agent sessions (where its logs are) and how many iterations
// each of its changes has, not its changes' commits (files, test results,
// snapshots, usage). A whole Job took ~1.4 KB of heap; with 10,000 jobs on
// the board that was most of its memory (bench/dashboard.bench.js, issue 32).
// The board reads the whole record of the job it shows (selected or drilled
// into), and keeps whole the jobs written while it runs.
import type { Job, JobChange } from './job.js';

/** What only a job's detail shows (its whole record), not its card. */
type DetailOnly =
  | 'changes'
  | 'project_review'
  | 'session_id'
  | 'feedback'
  | 'base_rev'
  | 'workspace_path'
  | 'auto_commit'
  | 'retried_from'
  | 'base_branch';

export type JobCard = Omit<Job, DetailOnly> & {
  /** Marks a card: what a whole record has, it does not. */
  readonly card: true;
  /** The commit count of each change, in order. */
  readonly iterations: readonly number[];
};

/** A job as the board lists it: whole, or its card. */
export type BoardJob = Job | JobCard;

export const isWholeJob = (j: BoardJob): j is Job => !('card' in j);

/** The commit count of each of the job's changes, in order. */
export const iterationsOf = (j: BoardJob): readonly number[] =>
  isWholeJob(j) ? j.changes.map((c: JobChange) => c.commits.length) : j.iterations;

/** The card of a whole job (a shared store's copy, tests). */
export function toJobCard(job: Job): JobCard {
  const {
    changes,
    project_review: _p,
    session_id: _s,
    feedback: _f,
    base_rev: _b,
    workspace_path: _w,
    auto_commit: _a,
    retried_from: _r,
    base_branch: _bb,
    ...own
  } = job;
  return { ...own, card: true, iterations: changes.map((c) => c.commits.length) };
}
