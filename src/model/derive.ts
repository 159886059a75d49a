// Derived state: computed from a stored Job, never stored itself.
import type { FileChange, Job, JobChange, JobCommit, JobLanding, JobStage, JobStatus } from './job.js';

/**
 * The change the job is working on (the job change tracking spec's
 * CurrentChange): its last change while that is not complete; null for a job
 * with none, or whose last change was accepted (the next one is not made
 * until the next implement pass starts).
 */
export function currentChange(job: Pick<Job, 'changes'>): JobChange | null {
  const last = job.changes.at(-1);
  return last && !isChangeComplete(last) ? last : null;
}

/** The latest iteration of the current change (the spec's CurrentCommit), or null. */
export function currentCommit(job: Pick<Job, 'changes'>): JobCommit | null {
  return currentChange(job)?.commits.at(-1) ?? null;
}

/**
 * The last commit of the last change, complete or not: the one the tests,
 * the review and the commit stage write to (the spec's "last commit of last
 * change"). Null when the last change has none yet.
 */
export function lastCommit(job: Pick<Job, 'changes'>): JobCommit | null {
  return job.changes.at(-1)?.commits.at(-1) ?? null;
}

/** The job's newest iteration commit in any change (a new change has none yet), or null. */
export function latestCommit(job: Pick<Job, 'changes'>): JobCommit | null {
  for (let i = job.changes.length - 1; i >= 0; i--) {
    const c = job.changes[i]!.commits.at(-1);
    if (c) return c;
  }
  return null;
}

/** A change is complete when its last commit's review accepted it. */
export function isChangeComplete(change: JobChange): boolean {
  return change.commits.at(-1)?.review?.outcome === 'ACCEPT';
}

/**
 * The changes that hold work (at least one commit). Every implement pass
 * starts its change on the record, so the pass that finds nothing more to
 * do leaves one with none: it is history, not a change the job made.
 */
export function changesMade(job: Pick<Job, 'changes'>): number {
  return job.changes.filter((c) => c.commits.length > 0).length;
}

/** Iterations of a change = its commits. */
export function iterationCount(change: JobChange | null): number {
  return change?.commits.length ?? 0;
}

/**
 * Whether the record tracks changes (the job change tracking spec). Every job
 * this runner runs does, from its start: an active job, or a finished one it
 * ran an agent for or reviewed, has exactly the changes recorded (maybe none).
 * A finished record with no change, no agent session and no project review
 * says nothing either way (a record from before change tracking, or a job
 * that never reached its agent): its counts are unknown.
 */
export function tracksChanges(
  job: Pick<Job, 'status' | 'changes' | 'agent_sessions' | 'project_review'>,
): boolean {
  return (
    job.status === 'active' ||
    job.changes.length > 0 ||
    job.agent_sessions.length > 0 ||
    job.project_review != null
  );
}

/**
 * `ii job list`'s CHANGES: how many changes hold work (the spec's example
 * shows 0 for a job implementing its first), or N/A when the record cannot tell.
 */
export function changeCountLabel(
  job: Pick<Job, 'status' | 'changes' | 'agent_sessions' | 'project_review'>,
): string {
  return tracksChanges(job) ? String(changesMade(job)) : NA;
}

/**
 * `ii job list`'s ITERATION: the iteration count of the change being worked
 * on; an active job with no open change is on iteration 1 of its next one;
 * a finished job shows its last change's count ("-" with none, N/A when the
 * record cannot tell).
 */
export function iterationLabel(
  job: Pick<Job, 'status' | 'changes' | 'agent_sessions' | 'project_review'>,
): string {
  if (!tracksChanges(job)) return NA;
  if (job.status === 'active') return String(Math.max(1, iterationCount(currentChange(job))));
  const last = job.changes.findLast((c) => c.commits.length > 0);
  return last ? String(iterationCount(last)) : '-';
}

// ─── Kanban columns ────────────────────────────────────────────────────────

export const JOB_COLUMNS = [
  'Implementing',
  'Testing',
  'Reviewing',
  'Committing',
  'Completed',
  'Landed',
  'Failed',
  'Abandoned',
] as const;
export type JobColumn = (typeof JOB_COLUMNS)[number];

const STAGE_COLUMN: Record<JobStage, JobColumn> = {
  implementing: 'Implementing',
  testing: 'Testing',
  reviewing: 'Reviewing',
  committing: 'Committing',
};
const STATUS_COLUMN: Record<Exclude<JobStatus, 'active'>, JobColumn> = {
  completed: 'Completed',
  failed: 'Failed',
  abandoned: 'Abandoned',
};

/**
 * A finished job sits in its status column, and a completed one whose
 * commits are on the branch in Landed; an active one in its stage column.
 */
export function jobColumn(job: Pick<Job, 'status' | 'stage'> & { landed?: Job['landed'] }): JobColumn {
  if (job.status === 'active') return STAGE_COLUMN[job.stage];
  return job.status === 'completed' && job.landed ? 'Landed' : STATUS_COLUMN[job.status];
}

export const CHANGE_COLUMNS = [
  'Implementing',
  'Testing',
  'Reviewing',
  'Committed',
  'Failed',
  'Abandoned',
] as const;
export type ChangeColumn = (typeof CHANGE_COLUMNS)[number];

/**
 * The column of a change, decided by its last commit. The first rule that
 * matches wins, so a change is in exactly one column:
 *
 *  1. last review ACCEPT                         → Committed
 *  2. last review ABANDON                        → Abandoned
 *  3. the job failed (nobody will move it on)    → Failed
 *  4. the job ended otherwise (completed or
 *     abandoned before this change was accepted) → Abandoned
 *  5. no commit yet                              → Implementing
 *  6. tests failed, or review REQUEST_CHANGES    → Implementing (the agent reworks it)
 *  7. tests not run yet (tests_passed null)      → Testing
 *  8. tests passed, no review yet                → Reviewing
 *
 * A failed job's change was not given up by anyone: calling it Abandoned
 * sent people looking for who abandoned it, when the job's failure reason
 * is the answer.
 *
 * The old rules put a commit with no review in both Implementing and Testing;
 * rule 7 settles it: a commit exists only after the agent finished its pass,
 * so an untested commit is waiting on tests, not on the agent.
 */
export function changeColumn(change: JobChange, job: Pick<Job, 'status'>): ChangeColumn {
  const last = change.commits.at(-1);
  if (last?.review?.outcome === 'ACCEPT') return 'Committed';
  if (last?.review?.outcome === 'ABANDON') return 'Abandoned';
  if (job.status === 'failed') return 'Failed';
  if (job.status !== 'active') return 'Abandoned';
  if (!last) return 'Implementing';
  if (last.tests_passed === false || last.review?.outcome === 'REQUEST_CHANGES') return 'Implementing';
  if (last.tests_passed === null) return 'Testing';
  return 'Reviewing';
}

/**
 * The word for a change's state in a line of text (`ii job show`, the change
 * history): its column, except that a change an ended job left with no commit
 * is `Empty`. Nobody abandoned it: a completed job's last implement pass found
 * nothing more to change (or the job ended before its first commit), and
 * "Abandoned" sent people looking for who gave it up.
 */
export function changeWord(change: JobChange, job: Pick<Job, 'status'>): ChangeColumn | 'Empty' {
  if (change.commits.length === 0 && job.status !== 'active') return 'Empty';
  return changeColumn(change, job);
}

/**
 * What a change with no commit says in place of its last commit's outcome:
 * being made, or why it has none.
 */
export function noCommitNote(job: Pick<Job, 'status'>): string {
  if (job.status === 'active') return 'no iteration yet';
  return job.status === 'completed'
    ? 'no commit: the last implement pass found nothing more to change'
    : 'no commit: the job ended before its first';
}

/**
 * What came of an iteration commit, in the words every view uses (the
 * board's cards, the status bar, `ii job diff`'s summary): the review's
 * verdict when it has one, else what its tests said.
 */
export function commitOutcome(c: Pick<JobCommit, 'review' | 'tests_passed'>): string {
  if (c.review) return `review ${c.review.outcome}`;
  if (c.tests_passed === false) return 'tests failed';
  if (c.tests_passed === true) return 'tests passed';
  return 'not tested';
}

export const COMMIT_COLUMNS = ['Draft', 'Testing', 'Reviewing', 'Rejected', 'Accepted'] as const;
export type CommitColumn = (typeof COMMIT_COLUMNS)[number];

/**
 * The column of one iteration commit. First match wins:
 *
 *  1. review ACCEPT                                   → Accepted
 *  2. review REQUEST_CHANGES or ABANDON, or tests failed → Rejected
 *  3. tests not run, and it is the current commit of an
 *     active job in the testing stage                 → Testing
 *  4. tests not run otherwise (never tested)          → Draft
 *  5. tests passed, no review                         → Reviewing
 */
export function commitColumn(
  commit: JobCommit,
  ctx: { isCurrent: boolean; job: Pick<Job, 'status' | 'stage'> },
): CommitColumn {
  const outcome = commit.review?.outcome;
  if (outcome === 'ACCEPT') return 'Accepted';
  if (outcome === 'REQUEST_CHANGES' || outcome === 'ABANDON' || commit.tests_passed === false)
    return 'Rejected';
  if (commit.tests_passed === null) {
    return ctx.isCurrent && ctx.job.status === 'active' && ctx.job.stage === 'testing' ? 'Testing' : 'Draft';
  }
  return 'Reviewing';
}

/** How long without a heartbeat before an active job counts as stale. */
export const STALE_AFTER_MS = 30_000;

/**
 * An active job whose runner is gone. `pidAlive` tells whether the runner's
 * pid is alive when it ran on this host (the caller probes; this stays pure).
 */
export function isStale(
  job: Pick<Job, 'status' | 'heartbeat_at' | 'host' | 'pid' | 'updated_at'>,
  now: number,
  probe: { host: string; pidAlive: (pid: number) => boolean },
): boolean {
  if (job.status !== 'active') return false;
  if (job.host === probe.host && job.pid != null) return !probe.pidAlive(job.pid);
  const beat = Date.parse(job.heartbeat_at ?? job.updated_at);
  return Number.isFinite(beat) ? now - beat > STALE_AFTER_MS : true;
}

/**
 * A completed job that is to land (started by ii run --land) and has not:
 * a landing runner lands it, unless its last landing was refused.
 */
export function awaitsLanding(job: Pick<Job, 'to_land' | 'status' | 'landed'>): boolean {
  return job.to_land && job.status === 'completed' && !job.landed;
}

/**
 * A landing recorded as under way whose process still runs. One on another
 * host cannot be probed from here: it is taken as under way, so it is never
 * landed twice (a person can still land the job there).
 */
export function landingUnderWay(
  l: JobLanding | null,
  probe: { host: string; pidAlive: (pid: number) => boolean },
): boolean {
  if (l?.state !== 'landing' || l.pid == null) return false;
  return l.host !== probe.host || probe.pidAlive(l.pid);
}

/** "N/A" for what an old record lacks, so nothing derived ever throws. */
export const NA = 'N/A';

/**
 * The files a job changed, from its record: each path's latest state over
 * every iteration. What `f` lists once the tracker's live reports are gone
 * (a finished job opened later).
 */
export function recordedFiles(job: Pick<Job, 'changes'>): FileChange[] {
  const by = new Map<string, FileChange>();
  for (const ch of job.changes) for (const c of ch.commits) for (const f of c.files) by.set(f.path, f);
  return [...by.values()].sort((a, b) => a.path.localeCompare(b.path));
}
