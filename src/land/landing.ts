// Landing a completed job: its commits (base..final) rebased onto the target
// branch as it is now, the test commands run on the rebased tip, and the
// branch advanced only by compare-and-swap; where the branch is checked out
// (the user's checkout), only as `git merge --ff-only` would, which never
// touches a file with uncommitted changes. Everything happens in a throwaway
// worktree under the state dir; the user's files are never written by us.
// Domain only: the CLI (src/cli/job/land.ts) and the dashboard call landJob,
// and hand it its git (LandingVcs) and, for a conflict the agent resolves
// (resolve-conflicts.ts), the job's collaborators; the rebased tip's tests
// are tip-tests.ts.
import { join } from 'node:path';
import type { Job, JobLandConflict, JobLanded, JobLanding } from '../model/job.js';
import { shownText } from '../text/shown.js';
import { hostName } from '../proc/host.js';
import { appendEvent } from '../state/events.js';
import { workspacesDir } from '../state/paths.js';
import { removeOverlays } from '../proc/sandbox/overlay.js';
import { processesIn } from '../proc/cwd.js';
import { isInside } from '../session/paths.js';
import { writeJournal } from '../journal/write.js';
import { LandRefused, landable, refuseIfBusy, short, stoppedRefusal, target } from './plan.js';
import {
  LAND_ATTEMPTS,
  RESOLUTION_ROUNDS,
  type LandInput,
  type LandProgress,
  type LandResult,
} from './input.js';
import { resolveThenLand, type ToResolve } from './resolve-conflicts.js';
import { testTip } from './tip-tests.js';
import { landingUnderWay } from '../model/derive.js';
import { isWorkspaceBranch } from '../model/workspace-branch.js';
import { localProbe } from '../proc/alive.js';
import { fetchJobCommits, jobFetchRemote } from '../history/fetch-job.js';
import { pushLanded, remoteTarget, unpushLanded, type RemoteTarget } from './remote-push.js';

export { finalCommit, LandRefused, landPlan, type LandPlan } from './plan.js';
export type { LandInput, LandProgress, LandResult } from './input.js';

/**
 * Lands a completed job. Each step is recorded on the job (JobLanding) as it
 * happens, and a refusal too, so the board shows a landing run by another
 * process (the dashboard's `m` starts one in the background) and why it stopped.
 */
export function landJob(input: LandInput): Promise<LandResult> {
  return recordingSteps(input, landJobIn);
}

/** continueLanding, its steps recorded as landJob's are. */
export function continueLanding(input: LandInput): Promise<LandResult> {
  return recordingSteps(input, continueLandingIn);
}

async function recordingSteps(
  input: LandInput,
  land: (input: LandInput) => Promise<LandResult>,
): Promise<LandResult> {
  const { store, job } = input;
  let onto = input.job.land_conflict?.onto ?? input.onto ?? '';
  const me = { pid: process.pid, host: hostName() };
  const at = () => new Date().toISOString();
  // Taken first, in one transaction: a landing runner (ii run --land) and a
  // person's ii job land, or two landing runners, never land one job twice.
  // A landing recorded by a process that is gone (killed mid-way) is taken over.
  const taken = await store.jobs.takeLanding(
    job.id,
    { state: 'landing', onto, step: 'starting', at: at(), ...me },
    (l) => !(l.pid === me.pid && l.host === me.host) && landingUnderWay(l, localProbe),
  );
  if (!taken.ok)
    throw taken.landed
      ? new LandRefused(`job ${job.id} was already landed (ii job show ${job.id}).`, 'not-landable')
      : new LandRefused(
          `job ${job.id} is being landed by another process (pid ${taken.by?.pid ?? '?'} on ${taken.by?.host ?? '?'}, since ${taken.by?.at ?? '?'}): ii job show ${job.id} says how it goes.`,
          'busy',
        );
  // Progress is written behind the landing, one step after another (the
  // board's view of it: a failed write is let go, the landing goes on); the
  // landing's own writes of the job wait for the steps before them, so a
  // step written late never covers the landing's end (PostgreSQL's pool
  // could run two writes at once in any order).
  let written: Promise<void> = Promise.resolve();
  const record = (state: 'landing' | 'refused', step: string) => {
    written = written
      .then(() => store.jobs.setLanding(job.id, { state, onto, step, at: at(), ...me }))
      .catch(() => {});
  };
  const after =
    <A extends unknown[], R>(write: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      await written;
      return write(...a);
    };
  const jobs = {
    ...store.jobs,
    setLanding: after((id: string, l: JobLanding | null) => store.jobs.setLanding(id, l)),
    setLandConflict: after((id: string, c: JobLandConflict | null) => store.jobs.setLandConflict(id, c)),
    setLanded: after((id: string, l: JobLanded) => store.jobs.setLanded(id, l)),
  };
  const onProgress = (p: LandProgress) => {
    if (p.type === 'target') onto = p.onto;
    const step = landingStep(p, onto);
    if (step) record('landing', step);
    input.onProgress?.(p);
  };
  try {
    return await land({ ...input, store: { ...store, jobs }, onProgress });
  } catch (err) {
    // A job that was never landable has no landing to show (the person was
    // told): what was recorded before this one is put back.
    if (!(err instanceof LandRefused && err.kind === 'not-landable'))
      record('refused', keptLines((err as Error).message));
    else
      try {
        await jobs.setLanding(job.id, job.landing);
      } catch {}
    throw err;
  } finally {
    await written;
  }
}

/** The step a progress report means, in the board's words (null: no new step). */
export function landingStep(p: LandProgress, onto: string): string | null {
  switch (p.type) {
    case 'target':
      return `rebasing onto ${p.onto}`;
    case 'rebased':
      return p.attempt > 1 ? `rebased again onto ${onto}` : `rebased onto ${onto}`;
    case 'setup':
      return 'setting up the landing worktree';
    case 'test_start':
      return `testing the rebased tip: ${p.command}`;
    case 'tests_skipped':
      return `advancing ${onto} (not tested)`;
    case 'target_moved':
      return `${onto} moved: rebasing again`;
    case 'checkout_updated':
      return `updating the checkout ${p.path}`;
    case 'resolving':
      return `conflicts in ${p.files.length} file${p.files.length === 1 ? '' : 's'}: the agent resolves them`;
    case 'resolution_stage':
      return `resolving conflicts: ${p.stage}`;
    default:
      return null;
  }
}

/**
 * A refusal as one line for the job's record (job show, the board's card):
 * all of it, not its first line, which often ends in a colon before what git
 * said and what to do.
 */
/**
 * A refusal as it is recorded: its lines as git and land() wrote them (ii
 * job show prints them one under another; folded into one, git's list of
 * files and its advice ran on), less trailing spaces and blank lines.
 */
const keptLines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean)
    .join('\n');

async function landJobIn(input: LandInput): Promise<LandResult> {
  const { repo, job } = input;
  const progress = input.onProgress ?? (() => {});
  const { base, final } = landable(job);
  // A job run on another machine: its commits come from the shared remote first.
  await fetchJobCommits(input.vcs, repo.root, job, [base, final], () =>
    jobFetchRemote(input.config, job, repo.root),
  );
  if (!(await input.vcs.isAncestor(repo.root, base, final)))
    throw new LandRefused(
      `job ${job.id}'s final commit ${short(final)} is not on top of its base ${short(base)} (or is missing from this repository): it cannot be landed.`,
      'not-landable',
    );
  const { onto, note } = await target(input);
  const tip = await input.vcs.branchTip(repo.root, onto);
  if (!tip)
    throw new LandRefused(
      `there is no local branch ${onto} to land on: create it, or pass --onto an existing branch (git branch lists them).`,
      'target',
    );
  // Refused before the rebase and the tests, as well as before the move.
  await refuseIfBusy(input.vcs, repo.root, job.id, onto);
  const original = await input.vcs.commitsBetween(repo.root, base, final);
  progress({ type: 'target', onto, tip, commits: original.length, note });
  // Not under workspaces/: that is the pool `ii workspace prune` clears.
  const ws = landingWorktree(input);
  await input.vcs.addLandingWorktree(repo.root, ws, tip);
  return landIn(input, {
    ws,
    onto,
    note,
    tip,
    base,
    head: final,
    rebased: null,
    test: input.test !== false,
  });
}

/**
 * Goes on with a landing stopped in a conflict, once a person resolved it in
 * its worktree (and `git add`ed the files): the rebase continues, a new
 * conflict stops it again, and a finished one is tested and landed as
 * landJob does.
 */
async function continueLandingIn(input: LandInput): Promise<LandResult> {
  const { store, job } = input;
  const c = job.land_conflict;
  if (!c)
    throw new LandRefused(
      `job ${job.id} has no landing stopped in a conflict: nothing to continue.`,
      'not-landable',
    );
  if (!(await input.vcs.rebaseInProgress(c.worktree))) {
    // Nothing to go on with (the worktree was removed by hand): the job is
    // as it was before the landing began, which is what the record then says.
    await input.vcs.removeLandingWorktree(input.repo.root, c.worktree).catch(() => {});
    removeOverlays(input.stateDir, c.worktree);
    await store.jobs.setLandConflict(job.id, null);
    throw new LandRefused(
      `the stopped landing of job ${job.id} is gone (no rebase in ${c.worktree}): the job is back to completed, not landed. Land it again: ii job land ${job.id}`,
      'not-landable',
    );
  }
  const r = await input.vcs.continueRebase(c.worktree);
  if (!r.ok) {
    if (!r.conflicts.length)
      throw new LandRefused(`git rebase --continue failed in ${c.worktree}:\n${r.detail}`, 'conflict');
    const again = { ...c, files: r.conflicts, at: new Date().toISOString() };
    await store.jobs.setLandConflict(job.id, again);
    throw stoppedRefusal(
      job.id,
      again,
      r.detail === 'unresolved' ? 'still unresolved' : 'the next commit conflicts',
    );
  }
  // Resolved: from here the landing goes on as any other, and a conflict
  // after the target moves stops for the person again.
  await store.jobs.setLandConflict(job.id, null);
  const test = input.test ?? c.test;
  try {
    return await landIn(
      { ...input, onConflict: 'stop' },
      {
        ws: c.worktree,
        onto: c.onto,
        note: null,
        tip: c.tip,
        base: c.tip,
        head: r.head,
        rebased: r.head,
        test,
      },
    );
  } catch (err) {
    if (!(err instanceof LandRefused) || err.kind === 'conflict') throw err;
    // Red tests or a checkout in the way: the person's resolution is not
    // thrown away with the landing worktree.
    const ref = `refs/incrementum/resolved/${job.id}`;
    await input.vcs.keepRef(input.repo.root, ref, r.head);
    throw new LandRefused(
      `${err.message}\nYour resolution is kept as ${short(r.head)} (${ref}); the job is completed, not landed.`,
      err.kind,
      err.conflicts,
    );
  }
}

/** Ends a landing stopped in a conflict: the rebase undone, its worktree removed, the job as before. */
export async function abortLanding(input: LandInput): Promise<Job> {
  const { store, job } = input;
  const c = job.land_conflict;
  if (!c)
    throw new LandRefused(
      `job ${job.id} has no landing stopped in a conflict: nothing to abort.`,
      'not-landable',
    );
  if (await input.vcs.rebaseInProgress(c.worktree)) await input.vcs.abortRebase(c.worktree);
  await input.vcs.removeLandingWorktree(input.repo.root, c.worktree);
  removeOverlays(input.stateDir, c.worktree);
  await store.jobs.setLandConflict(job.id, null);
  await store.jobs.setLanding(job.id, null);
  appendEvent(input.stateDir, job.id, 'info', {
    message: `landing on ${c.onto} aborted: the job is completed, not landed`,
  });
  return (await store.jobs.get(job.id)) ?? job;
}

function landingWorktree(input: LandInput): string {
  return join(input.stateDir, 'landing', input.repo.slug, input.job.id);
}

interface Landing {
  ws: string;
  onto: string;
  note: string | null;
  /** The target's tip as last seen. */
  tip: string;
  /** The commits base..head are what is to be rebased onto tip. */
  base: string;
  head: string;
  /** Already rebased onto tip (a continued landing): the first round skips the rebase. */
  rebased: string | null;
  test: boolean;
}

/** Rebase, test, compare-and-swap, in rounds while the target moves; the landing worktree is removed unless a conflict stops it for a person. */
async function landIn(input: LandInput, l: Landing): Promise<LandResult> {
  const { store, repo, job } = input;
  const progress = input.onProgress ?? (() => {});
  const stop = (input.onConflict ?? input.config.land['on-conflict']) === 'stop';
  const max = input.maxAttempts ?? LAND_ATTEMPTS;
  const checkouts: string[] = [];
  let { tip, base, head } = l;
  let pending = l.rebased;
  let landedHead: string | null = null;
  let kept = false;
  let toResolve: ToResolve | null = null;
  let attempts: number;
  let remote: RemoteTarget | null;
  try {
    // Where the target is now: a continued landing's tip was recorded when
    // its conflict stopped, and the person may have pulled since (as a
    // refusal tells them to). The remote is checked against this tip, and
    // what is pushed is built on it: the resolved commits go onto it first,
    // so a push never leaves out what the pull brought.
    const here = (await input.vcs.branchTip(repo.root, l.onto)) ?? l.tip;
    if (here !== tip) {
      if (pending) {
        base = tip;
        head = pending;
        pending = null;
      }
      tip = here;
    }
    // Where the shared remote's branch is, before anything is done ([land] push).
    remote = await remoteTarget(input, l.onto, tip);
    for (attempts = 1; attempts <= max; attempts++) {
      let next: string;
      if (pending) {
        next = pending;
        pending = null;
      } else {
        const rebased = await input.vcs.rebaseInWorktree(l.ws, tip, base, head, stop);
        if (!rebased.ok && stop && rebased.conflicts.length) {
          const c: JobLandConflict = {
            onto: l.onto,
            tip,
            files: rebased.conflicts,
            worktree: l.ws,
            at: new Date().toISOString(),
            test: l.test,
          };
          await store.jobs.setLandConflict(job.id, c);
          appendEvent(input.stateDir, job.id, 'warning', {
            message: `landing on ${l.onto} stopped in a conflict (${rebased.conflicts.length} file${rebased.conflicts.length === 1 ? '' : 's'}): resolve it in ${l.ws}, then ii job land ${job.id} --continue, or --abort`,
          });
          kept = true;
          throw stoppedRefusal(job.id, c);
        }
        if (
          !rebased.ok &&
          !stop &&
          rebased.conflicts.length &&
          (input.resolutions ?? 0) < RESOLUTION_ROUNDS &&
          job.status === 'completed'
        ) {
          // on-conflict = "agent": replay the job's commits taking its side of
          // each conflicting hunk, and hand the branch's side to the agent.
          const replay = await input.vcs.rebaseTakingJobSide(l.ws, tip, base, head);
          if (replay.ok) {
            toResolve = { tip, base, head, files: rebased.conflicts, replayed: replay.head };
            break;
          }
        }
        if (!rebased.ok)
          throw new LandRefused(
            `job ${job.id} does not rebase cleanly onto ${l.onto} (${short(tip)}): conflicts in\n` +
              rebased.conflicts.map((f) => `  ${shownText(f)}`).join('\n') +
              `\nNothing was changed. Resolve it by hand (git rebase --onto ${l.onto} ${short(base)} ${short(head)}), or retry the todo on the new ${l.onto}: ii job retry ${job.id}`,
            'conflict',
            rebased.conflicts,
          );
        next = rebased.head;
      }
      progress({ type: 'rebased', attempt: attempts, onto_tip: tip, head: next });
      if (l.test) await testTip(input, l.ws, l.onto);
      else progress({ type: 'tests_skipped' });

      const moved = await advance(input, l.onto, next, tip, checkouts, progress, remote);
      if (moved === 'ok') {
        landedHead = next;
        break;
      }
      const now = await input.vcs.branchTip(repo.root, l.onto);
      if (!now)
        throw new LandRefused(`the branch ${l.onto} was deleted while job ${job.id} was landing.`, 'target');
      // What is rebased next is what was just rebased (and perhaps resolved by
      // a person): its commits on the old tip go onto the new one.
      base = tip;
      head = next;
      tip = now;
      progress({ type: 'target_moved', attempt: attempts, tip });
    }
  } finally {
    if (!kept) {
      await input.vcs.removeLandingWorktree(repo.root, l.ws).catch(() => {});
      removeOverlays(input.stateDir, l.ws);
    }
  }
  if (toResolve) return resolveThenLand(input, l.onto, toResolve, landJob);
  if (!landedHead) {
    if (job.land_conflict) await store.jobs.setLandConflict(job.id, null);
    throw new LandRefused(
      `${l.onto} kept moving while job ${job.id} was landing (${max} attempts, each rebased and tested again): nothing was overwritten; run ii job land ${job.id} again.`,
      'moved',
    );
  }

  const landed: JobLanded = {
    onto: l.onto,
    commit: landedHead,
    at: new Date().toISOString(),
    tested: l.test,
  };
  const updated = await store.jobs.setLanded(job.id, landed);
  appendEvent(input.stateDir, job.id, 'info', {
    message: `landed on ${l.onto} at ${short(landedHead)}${remote ? ` (and on the remote ${remote.remote.name})` : ''}${l.test ? ', tested on the rebased tip' : ' (--no-test: not tested)'}`,
  });
  progress({ type: 'landed', landed });
  await releaseJobWorkspace(input);
  // The journal says where the work went; a journal that cannot be written
  // does not undo a landing that happened.
  await writeJournal(store, input.stateDir, job.id, { repoRoot: repo.root }).catch(() => {});
  return {
    job: updated,
    landed,
    commits: await input.vcs.commitsBetween(repo.root, tip, landedHead),
    note: l.note,
    attempts,
    checkouts,
  };
}

/**
 * Moves `onto` from `old` to `next`: 'moved' when it is no longer at `old`
 * (nothing done). Where it is checked out, that checkout is fast-forwarded
 * as `git merge --ff-only` does, and a refusal there throws (nothing moved).
 */
async function advance(
  input: LandInput,
  onto: string,
  next: string,
  old: string,
  checkouts: string[],
  progress: (p: LandProgress) => void,
  remote: RemoteTarget | null,
): Promise<'ok' | 'moved'> {
  // Again just before the move: a rebase or merge may have begun while the
  // tests ran.
  await refuseIfBusy(input.vcs, input.repo.root, input.job.id, onto);
  if (!remote) return advanceHere(input, onto, next, old, checkouts, progress);
  // The remote first (remote-push.ts): a lost lease has changed nothing.
  await pushLanded(input, onto, next, remote);
  let moved: 'ok' | 'moved';
  try {
    moved = await advanceHere(input, onto, next, old, checkouts, progress);
  } catch (err) {
    const note = await unpushLanded(input, onto, next, remote);
    if (note && err instanceof LandRefused) throw new LandRefused(`${err.message}\n${note}`, err.kind);
    throw err;
  }
  if (moved === 'moved') {
    // Rebased again onto the new local tip, and pushed again, by the caller.
    const note = await unpushLanded(input, onto, next, remote);
    if (note)
      throw new LandRefused(`${onto} moved here while job ${input.job.id} was landing. ${note}`, 'remote');
  }
  return moved;
}

/** advance() on this clone: the local branch, or the checkout that has it. */
async function advanceHere(
  input: LandInput,
  onto: string,
  next: string,
  old: string,
  checkouts: string[],
  progress: (p: LandProgress) => void,
): Promise<'ok' | 'moved'> {
  const reason = `incrementum: land job ${input.job.id}`;
  const where = await input.vcs.checkoutsOf(input.repo.root, onto);
  if (where.length === 0)
    return (await input.vcs.casBranch(input.repo.root, onto, next, old, reason)) ? 'ok' : 'moved';
  // A branch is checked out in one worktree at most (git refuses a second).
  const checkout = where[0]!;
  const ff = await input.vcs.fastForwardCheckout(checkout, next, old);
  if (ff.ok) {
    checkouts.push(checkout);
    progress({ type: 'checkout_updated', path: checkout });
    return 'ok';
  }
  if (ff.moved) return 'moved';
  throw new LandRefused(
    `${onto} is checked out in ${checkout}, and git merge --ff-only refused to update it there, so nothing was changed:\n` +
      ff.detail
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n') +
      `\nCommit or stash those changes (git stash), then run ii job land ${input.job.id} again.`,
    'checkout',
  );
}

/**
 * The job's workspace, now that its work is on the branch: removed with its
 * branch if no other job has taken it since (its iteration refs stay).
 */
async function releaseJobWorkspace(input: LandInput): Promise<void> {
  const path = input.job.workspace_path;
  if (!path) return;
  const w = (await input.store.workspaces.list(input.repo.slug)).find((x) => x.path === path);
  if (!w || w.status !== 'free') return;
  if (!isInside(workspacesDir(input.stateDir, input.repo.slug), path)) return;
  // Never from under a process still working in it (a shell cd'd there):
  // it stays, free, for ii workspace prune to take once that has ended.
  if (processesIn(path).length > 0) return;
  if (!(await input.store.workspaces.removeIfFree(path))) return;
  await input.vcs.removeWorkspace(input.repo.root, path).catch(() => {});
  removeOverlays(input.stateDir, path);
  if (isWorkspaceBranch(w.branch)) await input.vcs.deleteBranch(input.repo.root, w.branch);
}
