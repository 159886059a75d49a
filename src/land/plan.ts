// What landing a job would do, decided without changing anything: whether
// it can land, where (the target), which commits. landJob (landing.ts) starts
// here, and the dashboard's `m` asks it for its confirmation without loading
// the runner that a landing's conflict resolution needs.
import { UserError } from '../errors.js';
import type { Config } from '../model/config.js';
import type { Job, JobLandConflict } from '../model/job.js';
import { shownText } from '../text/shown.js';
import type { BusyState, LandingVcs } from '../vcs/landing-vcs.js';

/** What target() needs of a landing's input. */
export interface TargetInput {
  repo: { root: string; slug: string };
  config: Config;
  job: Job;
  /** Landing's git (a GitVcs from the composition). */
  vcs: LandingVcs;
  /** --onto; else [land] onto; else the job's base branch; else the checked-out branch. */
  onto?: string;
}

export const short = (sha: string) => sha.slice(0, 10);

/** A landing that stopped: nothing was moved, the message says why and what to do. */
export class LandRefused extends UserError {
  constructor(
    message: string,
    readonly kind:
      | 'not-landable'
      | 'target'
      | 'conflict'
      | 'tests'
      | 'checkout'
      | 'busy'
      | 'moved'
      | 'aborted'
      /** The shared remote's branch: unreachable, ahead of the local one, or moved under the lease. */
      | 'remote',
    readonly conflicts: string[] = [],
  ) {
    super(message);
    this.name = 'LandRefused';
  }
}

/** The job's last commit (the final commit of its last change that has one). */
export function finalCommit(job: Job): string | null {
  for (let i = job.changes.length - 1; i >= 0; i--) {
    const c = job.changes[i]!.commits.at(-1);
    if (c) return c.commit_id;
  }
  return null;
}

/** Where the target comes from, and a note when it is a guess. */
export async function target(input: TargetInput): Promise<{ onto: string; note: string | null }> {
  if (input.onto) return { onto: input.onto, note: null };
  if (input.config.land.onto) return { onto: input.config.land.onto, note: null };
  if (input.job.base_branch) return { onto: input.job.base_branch, note: null };
  const current = await input.vcs.currentBranch(input.repo.root);
  if (!current)
    throw new LandRefused(
      `job ${input.job.id} has no recorded base branch and ${input.repo.root} has no branch checked out: pass --onto BRANCH.`,
      'target',
    );
  return {
    onto: current,
    note: `job ${input.job.id} records no base branch (it started from a tag, a commit or a detached HEAD, or predates them): landing onto the checked-out branch, ${current} (--onto chooses another)`,
  };
}

/** What landing a job would do, for a confirmation: where, which commits, whether the tests run. */
export interface LandPlan {
  onto: string;
  note: string | null;
  /** The job's commit subjects, oldest first. */
  subjects: string[];
  test: boolean;
}

/** The plan of landing `job` (nothing is changed); a job that cannot land is refused as landJob would. */
export async function landPlan(input: TargetInput & { test?: boolean }): Promise<LandPlan> {
  const { job } = input;
  const { base, final } = landable(job);
  const { onto, note } = await target(input);
  // The board asks before it lands: a branch mid-rebase is said now, not
  // after the person said yes.
  await refuseIfBusy(input.vcs, input.repo.root, job.id, onto);
  return {
    onto,
    note,
    subjects: await input.vcs.commitSubjects(input.repo.root, base, final),
    test: input.test !== false,
  };
}

/** The job's base and final commit, or why it cannot be landed. */
export function landable(job: Job): { base: string; final: string } {
  if (job.land_conflict) throw stoppedRefusal(job.id, job.land_conflict);
  if (job.landed)
    throw new LandRefused(
      `job ${job.id} was already landed on ${job.landed.onto} at ${short(job.landed.commit)}.`,
      'not-landable',
    );
  if (job.status !== 'completed')
    throw new LandRefused(
      `job ${job.id} is ${job.status}: only a completed job can be landed (ii job show ${job.id}).`,
      'not-landable',
    );
  const final = finalCommit(job);
  if (!final || !job.base_rev)
    throw new LandRefused(`job ${job.id} made no commits: there is nothing to land.`, 'not-landable');
  return { base: job.base_rev, final };
}

export function stoppedRefusal(id: string, c: JobLandConflict, why = 'stopped in a conflict'): LandRefused {
  return new LandRefused(
    `the landing of job ${id} on ${c.onto} is ${why}: git could not merge\n` +
      c.files.map((f) => `  ${shownText(f)}`).join('\n') +
      `\nThe rebase waits in ${c.worktree}: edit those files there, git add them, then run ii job land ${id} --continue` +
      ` (or ii job land ${id} --abort to put the job back as it was). Your checkout was not touched.`,
    'conflict',
    c.files,
  );
}

/** Each operation a branch can be stopped in: its name, what finishes it, what undoes it. */
const FINISH: Record<BusyState, { noun: string; finish: string; abort: string }> = {
  rebase: { noun: 'rebase', finish: 'git rebase --continue', abort: 'git rebase --abort' },
  bisect: { noun: 'bisect', finish: 'git bisect reset', abort: 'git bisect reset' },
  am: { noun: 'git am', finish: 'git am --continue', abort: 'git am --abort' },
  merge: { noun: 'merge', finish: 'resolve, then git commit', abort: 'git merge --abort' },
  'cherry-pick': {
    noun: 'cherry-pick',
    finish: 'git cherry-pick --continue',
    abort: 'git cherry-pick --abort',
  },
  revert: { noun: 'revert', finish: 'git revert --continue', abort: 'git revert --abort' },
};

/**
 * Refuses a landing on `onto` while git is in the middle of something on it
 * in some worktree: a branch moved under a stopped rebase is reset when the
 * rebase is aborted (or blocks its --continue), while the job would say
 * landed; a merge or am in progress holds the checkout.
 */
export async function refuseIfBusy(
  vcs: LandingVcs,
  root: string,
  jobId: string,
  onto: string,
): Promise<void> {
  const busy = await vcs.branchBusy(root, onto);
  if (!busy) return;
  const f = FINISH[busy.state];
  const how =
    busy.state === 'bisect'
      ? `end the bisect there (${f.finish})`
      : `finish the ${f.noun} there (${f.finish}) or abort it (${f.abort})`;
  throw new LandRefused(
    `${onto} is in the middle of a ${f.noun} in ${busy.worktree}, so nothing was changed: ${how}, then run ii job land ${jobId} again.`,
    'busy',
  );
}
