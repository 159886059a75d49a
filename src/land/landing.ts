// Landing a completed job: its commits (base..final) rebased onto the target
// branch as it is now, the test commands run on the rebased tip, and the
// branch advanced only by compare-and-swap; where the branch is checked out
// (the user's checkout), only as `git merge --ff-only` would, which never
// touches a file with uncommitted changes. Everything happens in a throwaway
// worktree under the state dir; the user's files are never written by us.
// Domain only: the CLI (src/cli/job/land.ts) and the dashboard call landJob,
// and hand it its git (LandingVcs) and, for a conflict the agent resolves,
// the job's collaborators.
import { join } from 'node:path';
import type { Config } from '../model/config.js';
import type { Job, JobLandConflict, JobLanded, TestResult } from '../model/job.js';
import { shownText } from '../text/shown.js';
import { hostname } from 'node:os';
import { newJobRunner, type JobDeps } from '../job/launch.js';
import { groupRecorder } from '../proc/recorded.js';
import { jobSandbox } from '../proc/sandbox/sandbox.js';
import { shortId } from '../state/ids.js';
import type { StateStore } from '../state/api.js';
import { appendEvent } from '../state/events.js';
import { workspacesDir } from '../state/paths.js';
import type { LandingVcs } from '../vcs/landing-vcs.js';
import type { Vcs } from '../vcs/vcs.js';
import { OutputTail, setupWorkspace } from '../job/workspace-setup.js';
import { removeOverlays } from '../proc/sandbox/overlay.js';
import { runTests } from '../job/test-runner.js';
import { processesIn } from '../proc/cwd.js';
import { isInside } from '../session/paths.js';
import { writeJournal } from '../journal/write.js';
import { LandRefused, landable, refuseIfBusy, short, stoppedRefusal, target } from './plan.js';
import { landingUnderWay } from '../model/derive.js';
import { localProbe } from '../proc/alive.js';

export { finalCommit, LandRefused, landPlan, type LandPlan } from './plan.js';

/** Times the target may move under a landing before it gives up (each time: rebase and test again). */
export const LAND_ATTEMPTS = 3;

export interface LandInput {
  store: StateStore;
  stateDir: string;
  repo: { root: string; slug: string };
  config: Config;
  /** A completed job (store.jobs.resolve gives one). */
  job: Job;
  /** --onto; else [land] onto; else the job's base branch; else the checked-out branch. */
  onto?: string;
  /** False: --no-test, the rebased tip is not tested (recorded as tested: false). */
  test?: boolean;
  /** Aborting ends a running test command's process group; nothing is moved. */
  signal?: AbortSignal;
  onProgress?: (p: LandProgress) => void;
  /** Bounds the rebase-and-test rounds when the target keeps moving (default LAND_ATTEMPTS). */
  maxAttempts?: number;
  /** What a conflicting rebase does (default [land] on-conflict). */
  onConflict?: 'agent' | 'stop';
  /** Landing's git steps, and the job's workspace removed once its work landed (a GitVcs from the composition). */
  vcs: LandingVcs & Pick<Vcs, 'removeWorkspace'>;
  /**
   * What runs the agent's resolution change (on-conflict = "agent"), loaded
   * only when a conflict goes to the agent (it loads the agent's SDK).
   */
  deps?: () => Promise<JobDeps>;
  /** Resolution changes this landing already made (bounds them). */
  resolutions?: number;
}

/** Resolution changes one landing may make before it gives up (the target keeps conflicting). */
export const RESOLUTION_ROUNDS = 2;

/** What a landing reports as it goes (the CLI prints it; the dashboard shows it live). */
export type LandProgress =
  | { type: 'target'; onto: string; tip: string; commits: number; note: string | null }
  | { type: 'rebased'; attempt: number; onto_tip: string; head: string }
  | { type: 'setup'; command: string }
  | { type: 'test_start'; command: string }
  | { type: 'test_output'; command: string; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'test_end'; result: TestResult }
  | { type: 'tests_skipped' }
  /** The target moved while this landing worked: rebase and test again. */
  | { type: 'target_moved'; attempt: number; tip: string }
  | { type: 'checkout_updated'; path: string }
  | { type: 'landed'; landed: JobLanded }
  /** The rebase conflicted: the job goes on with a resolve-conflicts change. */
  | { type: 'resolving'; files: string[]; onto: string }
  /** A stage of the resolution change (the job's own events say more). */
  | { type: 'resolution_stage'; stage: string }
  | { type: 'resolved'; status: string; reason: string | null };

export interface LandResult {
  job: Job;
  landed: JobLanded;
  /** The landed commits, oldest first (the rebased ones). */
  commits: string[];
  /** Said when the target was a guess (an older job with no recorded base branch). */
  note: string | null;
  attempts: number;
  /** The checkouts whose files were fast-forwarded. */
  checkouts: string[];
}

/**
 * Lands a completed job. Each step is recorded on the job (JobLanding) as it
 * happens, and a refusal too, so the board shows a landing run by another
 * process (the dashboard's `m` starts one in the background) and why it stopped.
 */
export function landJob(i: LandInput): Promise<LandResult> {
  return recordingSteps(i, landJobIn);
}

/** continueLanding, its steps recorded as landJob's are. */
export function continueLanding(i: LandInput): Promise<LandResult> {
  return recordingSteps(i, continueLandingIn);
}

async function recordingSteps(
  i: LandInput,
  land: (i: LandInput) => Promise<LandResult>,
): Promise<LandResult> {
  const { store, job } = i;
  let onto = i.job.land_conflict?.onto ?? i.onto ?? '';
  const me = { pid: process.pid, host: hostname() };
  const at = () => new Date().toISOString();
  // Taken first, in one transaction: a landing runner (ii run --land) and a
  // person's ii job land, or two landing runners, never land one job twice.
  // A landing recorded by a process that is gone (killed mid-way) is taken over.
  const taken = store.jobs.takeLanding(
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
  const record = (state: 'landing' | 'refused', step: string) => {
    try {
      store.jobs.setLanding(job.id, { state, onto, step, at: at(), ...me });
    } catch {
      // The board's view of progress; the landing itself goes on.
    }
  };
  const onProgress = (p: LandProgress) => {
    if (p.type === 'target') onto = p.onto;
    const step = landingStep(p, onto);
    if (step) record('landing', step);
    i.onProgress?.(p);
  };
  try {
    return await land({ ...i, onProgress });
  } catch (err) {
    // A job that was never landable has no landing to show (the person was
    // told): what was recorded before this one is put back.
    if (!(err instanceof LandRefused && err.kind === 'not-landable'))
      record('refused', keptLines((err as Error).message));
    else
      try {
        store.jobs.setLanding(job.id, job.landing);
      } catch {}
    throw err;
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

async function landJobIn(i: LandInput): Promise<LandResult> {
  const { repo, job } = i;
  const progress = i.onProgress ?? (() => {});
  const { base, final } = landable(job);
  if (!(await i.vcs.isAncestor(repo.root, base, final)))
    throw new LandRefused(
      `job ${job.id}'s final commit ${short(final)} is not on top of its base ${short(base)} (or is missing from this repository): it cannot be landed.`,
      'not-landable',
    );
  const { onto, note } = await target(i);
  const tip = await i.vcs.branchTip(repo.root, onto);
  if (!tip)
    throw new LandRefused(
      `there is no local branch ${onto} to land on: create it, or pass --onto an existing branch (git branch lists them).`,
      'target',
    );
  // Refused before the rebase and the tests, as well as before the move.
  await refuseIfBusy(i.vcs, repo.root, job.id, onto);
  const original = await i.vcs.commitsBetween(repo.root, base, final);
  progress({ type: 'target', onto, tip, commits: original.length, note });
  // Not under workspaces/: that is the pool `ii workspace prune` clears.
  const ws = landingWorktree(i);
  await i.vcs.addLandingWorktree(repo.root, ws, tip);
  return landIn(i, {
    ws,
    onto,
    note,
    tip,
    base,
    head: final,
    rebased: null,
    test: i.test !== false,
  });
}

/**
 * Goes on with a landing stopped in a conflict, once a person resolved it in
 * its worktree (and `git add`ed the files): the rebase continues, a new
 * conflict stops it again, and a finished one is tested and landed as
 * landJob does.
 */
async function continueLandingIn(i: LandInput): Promise<LandResult> {
  const { store, job } = i;
  const c = job.land_conflict;
  if (!c)
    throw new LandRefused(
      `job ${job.id} has no landing stopped in a conflict: nothing to continue.`,
      'not-landable',
    );
  if (!(await i.vcs.rebaseInProgress(c.worktree))) {
    // Nothing to go on with (the worktree was removed by hand): the job is
    // as it was before the landing began, which is what the record then says.
    await i.vcs.removeLandingWorktree(i.repo.root, c.worktree).catch(() => {});
    removeOverlays(i.stateDir, c.worktree);
    store.jobs.setLandConflict(job.id, null);
    throw new LandRefused(
      `the stopped landing of job ${job.id} is gone (no rebase in ${c.worktree}): the job is back to completed, not landed. Land it again: ii job land ${job.id}`,
      'not-landable',
    );
  }
  const r = await i.vcs.continueRebase(c.worktree);
  if (!r.ok) {
    if (!r.conflicts.length)
      throw new LandRefused(`git rebase --continue failed in ${c.worktree}:\n${r.detail}`, 'conflict');
    const again = { ...c, files: r.conflicts, at: new Date().toISOString() };
    store.jobs.setLandConflict(job.id, again);
    throw stoppedRefusal(
      job.id,
      again,
      r.detail === 'unresolved' ? 'still unresolved' : 'the next commit conflicts',
    );
  }
  // Resolved: from here the landing goes on as any other, and a conflict
  // after the target moves stops for the person again.
  store.jobs.setLandConflict(job.id, null);
  const test = i.test ?? c.test;
  try {
    return await landIn(
      { ...i, onConflict: 'stop' },
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
    await i.vcs.keepRef(i.repo.root, ref, r.head);
    throw new LandRefused(
      `${err.message}\nYour resolution is kept as ${short(r.head)} (${ref}); the job is completed, not landed.`,
      err.kind,
      err.conflicts,
    );
  }
}

/** Ends a landing stopped in a conflict: the rebase undone, its worktree removed, the job as before. */
export async function abortLanding(i: LandInput): Promise<Job> {
  const { store, job } = i;
  const c = job.land_conflict;
  if (!c)
    throw new LandRefused(
      `job ${job.id} has no landing stopped in a conflict: nothing to abort.`,
      'not-landable',
    );
  if (await i.vcs.rebaseInProgress(c.worktree)) await i.vcs.abortRebase(c.worktree);
  await i.vcs.removeLandingWorktree(i.repo.root, c.worktree);
  removeOverlays(i.stateDir, c.worktree);
  store.jobs.setLandConflict(job.id, null);
  store.jobs.setLanding(job.id, null);
  appendEvent(i.stateDir, job.id, 'info', {
    message: `landing on ${c.onto} aborted: the job is completed, not landed`,
  });
  return store.jobs.get(job.id) ?? job;
}

function landingWorktree(i: LandInput): string {
  return join(i.stateDir, 'landing', i.repo.slug, i.job.id);
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
async function landIn(i: LandInput, l: Landing): Promise<LandResult> {
  const { store, repo, job } = i;
  const progress = i.onProgress ?? (() => {});
  const stop = (i.onConflict ?? i.config.land['on-conflict']) === 'stop';
  const max = i.maxAttempts ?? LAND_ATTEMPTS;
  const checkouts: string[] = [];
  let { tip, base, head } = l;
  let pending = l.rebased;
  let landedHead: string | null = null;
  let kept = false;
  let toResolve: ToResolve | null = null;
  let attempts: number;
  try {
    for (attempts = 1; attempts <= max; attempts++) {
      let next: string;
      if (pending) {
        next = pending;
        pending = null;
      } else {
        const rebased = await i.vcs.rebaseInWorktree(l.ws, tip, base, head, stop);
        if (!rebased.ok && stop && rebased.conflicts.length) {
          const c: JobLandConflict = {
            onto: l.onto,
            tip,
            files: rebased.conflicts,
            worktree: l.ws,
            at: new Date().toISOString(),
            test: l.test,
          };
          store.jobs.setLandConflict(job.id, c);
          appendEvent(i.stateDir, job.id, 'warning', {
            message: `landing on ${l.onto} stopped in a conflict (${rebased.conflicts.length} file${rebased.conflicts.length === 1 ? '' : 's'}): resolve it in ${l.ws}, then ii job land ${job.id} --continue, or --abort`,
          });
          kept = true;
          throw stoppedRefusal(job.id, c);
        }
        if (
          !rebased.ok &&
          !stop &&
          rebased.conflicts.length &&
          (i.resolutions ?? 0) < RESOLUTION_ROUNDS &&
          job.status === 'completed'
        ) {
          // on-conflict = "agent": replay the job's commits taking its side of
          // each conflicting hunk, and hand the branch's side to the agent.
          const replay = await i.vcs.rebaseTakingJobSide(l.ws, tip, base, head);
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
      if (l.test) await testTip(i, l.ws, l.onto);
      else progress({ type: 'tests_skipped' });

      const moved = await advance(i, l.onto, next, tip, checkouts, progress);
      if (moved === 'ok') {
        landedHead = next;
        break;
      }
      const now = await i.vcs.branchTip(repo.root, l.onto);
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
      await i.vcs.removeLandingWorktree(repo.root, l.ws).catch(() => {});
      removeOverlays(i.stateDir, l.ws);
    }
  }
  if (toResolve) return resolveThenLand(i, l.onto, toResolve);
  if (!landedHead) {
    if (job.land_conflict) store.jobs.setLandConflict(job.id, null);
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
  const updated = store.jobs.setLanded(job.id, landed);
  appendEvent(i.stateDir, job.id, 'info', {
    message: `landed on ${l.onto} at ${short(landedHead)}${l.test ? ', tested on the rebased tip' : ' (--no-test: not tested)'}`,
  });
  progress({ type: 'landed', landed });
  await releaseJobWorkspace(i);
  // The journal says where the work went; a journal that cannot be written
  // does not undo a landing that happened.
  await writeJournal(store, i.stateDir, job.id, { repoRoot: repo.root }).catch(() => {});
  return {
    job: updated,
    landed,
    commits: await i.vcs.commitsBetween(repo.root, tip, landedHead),
    note: l.note,
    attempts,
    checkouts,
  };
}

interface ToResolve {
  /** The target's tip the job is replayed onto. */
  tip: string;
  /** The job's commits base..head. */
  base: string;
  head: string;
  files: string[];
  /** base..head replayed onto tip, the job's side taken in each conflicting hunk. */
  replayed: string;
}

/** Lines of each side's diff the agent is shown per conflicting file. */
const SIDE_LINES = 200;

/**
 * on-conflict = "agent": the job goes on. Its commits, replayed onto the
 * target with its own side of each conflicting hunk (every message and
 * Change-Id kept), become its new line, and a new change asks the agent,
 * with the resolve-conflicts template, to bring the branch's side back. That
 * change is tested and reviewed like any other; once the job completes
 * again, the landing is tried again (at most RESOLUTION_ROUNDS times).
 */
async function resolveThenLand(i: LandInput, onto: string, r: ToResolve): Promise<LandResult> {
  const { store, repo, job, config } = i;
  const progress = i.onProgress ?? (() => {});
  if (!i.deps)
    throw new LandRefused(
      `job ${job.id} conflicts with ${onto}, and this landing was given no agent to resolve it: nothing was landed.`,
      'conflict',
      r.files,
    );
  const deps = await i.deps();
  const todo = store.todos.get(repo.slug, job.todo_id);
  if (!todo)
    throw new LandRefused(
      `job ${job.id}'s todo ${job.todo_id} is gone: it cannot go on.`,
      'conflict',
      r.files,
    );
  const conflicts = await describeConflicts(i.vcs, repo.root, onto, r);
  const agent = deps.resolveAgent(config);
  progress({ type: 'resolving', files: r.files, onto });
  appendEvent(i.stateDir, job.id, 'info', {
    message: `landing on ${onto}: ${r.files.length} file${r.files.length === 1 ? '' : 's'} conflict (${r.files.join(', ')}); the job goes on with a change that resolves them`,
  });
  // The job names its new session before the workspace is made, as a claim
  // does: a runner killed while git makes the worktree leaves the job
  // pointing at the session that holds it, so the dead-runner cleanup gives
  // the workspace back instead of leaving it held by no one.
  const sessionId = shortId(todo.id);
  store.jobs.resume(job.id, process.pid, hostname(), sessionId);
  let started: Awaited<ReturnType<JobDeps['startSession']>>;
  try {
    started = await deps.startSession(store, {
      repoRoot: repo.root,
      slug: repo.slug,
      todoId: job.todo_id,
      sessionId,
      rev: r.replayed,
      stateDir: i.stateDir,
      copy: config.workspace.copy,
      jobId: job.id,
    });
  } catch (err) {
    store.jobs.finish(job.id, 'completed', null);
    throw new LandRefused(
      `the conflicts could not go to the agent: ${(err as Error).message}\nNothing was landed; the job is completed as before.`,
      'conflict',
      r.files,
    );
  }
  const { session, workspacePath } = started;
  // The job's work now sits on the target's tip: that is its base from here.
  store.jobs.setSession(job.id, session.id, workspacePath, r.tip);
  const runner = newJobRunner(deps, {
    store,
    stateDir: i.stateDir,
    agent,
    config,
    jobId: job.id,
    todo,
    repoRoot: repo.root,
    workspacePath,
    baseRev: r.tip,
    sessionId: session.id,
    resolving: { onto, conflicts },
    onEvent: (e) => {
      if (e.type === 'stage') progress({ type: 'resolution_stage', stage: e.to });
    },
  });
  const stopRun = () =>
    runner.cancel({ status: 'failed', reason: 'the conflict resolution was interrupted' });
  i.signal?.addEventListener('abort', stopRun);
  let done: Job;
  try {
    done = await runner.run();
  } finally {
    i.signal?.removeEventListener('abort', stopRun);
  }
  progress({ type: 'resolved', status: done.status, reason: done.failure_reason });
  if (done.status !== 'completed')
    throw new LandRefused(
      `the change resolving the conflicts with ${onto} did not complete (${done.status}${done.failure_reason ? `: ${done.failure_reason}` : ''}); nothing was landed.\n` +
        `ii job show ${job.id} says what happened; its commits are kept, and ii job retry ${job.id} starts the todo afresh on ${onto}.`,
      'conflict',
      r.files,
    );
  return landJob({ ...i, job: done, resolutions: (i.resolutions ?? 0) + 1 });
}

/** The resolve-conflicts prompt's Conflicts: each file with what the branch did to it and what the job did. */
async function describeConflicts(vcs: LandingVcs, root: string, onto: string, r: ToResolve): Promise<string> {
  const parts: string[] = [];
  for (const file of r.files) {
    const theirs = await vcs.fileDiff(root, r.base, r.tip, file, SIDE_LINES);
    const ours = await vcs.fileDiff(root, r.base, r.head, file, SIDE_LINES);
    const block = (d: { text: string; cut: boolean }) =>
      '```diff\n' + d.text + (d.cut ? `\n… (cut at ${SIDE_LINES} lines)` : '') + '\n```';
    parts.push(
      `## ${file}\n\nWhat ${onto} did (now missing from the workspace where it conflicted):\n\n${block(theirs)}\n\n` +
        `What the job did (in the workspace):\n\n${block(ours)}`,
    );
  }
  return parts.join('\n\n');
}

/** [workspace] setup if needed, then the test commands on the rebased tip; red throws. */
async function testTip(i: LandInput, ws: string, onto: string): Promise<void> {
  const progress = i.onProgress ?? (() => {});
  const { config } = i;
  const recordGroup = groupRecorder(i.store, i.job.id, ws);
  // The tip's setup and tests run in the job's sandbox as its own did.
  const sandbox = jobSandbox({
    config,
    repoRoot: i.repo.root,
    workspace: ws,
    stateDir: i.stateDir,
    agent: { name: '', command: [] },
  });
  const timeoutMs = config.job['test-timeout-seconds'] * 1000;
  const setup = await setupWorkspace({
    workspace: ws,
    checkout: i.repo.root,
    commands: config.workspace.setup,
    reuse: config.workspace.reuse,
    ...(i.signal ? { signal: i.signal } : {}),
    timeoutMs,
    recordGroup,
    sandbox,
    onStart: (command) => progress({ type: 'setup', command }),
  });
  if (setup.kind === 'aborted')
    throw new LandRefused('the landing was interrupted: nothing was moved.', 'aborted');
  if (setup.kind === 'failed')
    throw new LandRefused(
      `the workspace setup failed on the rebased tip (\`${setup.failed.command}\` exited ${setup.failed.exit_code}): ${onto} was not moved.\n${setup.tail}`,
      'tests',
    );
  const tails = new Map<string, OutputTail>();
  const run = await runTests({
    commands: config.job['test-commands'],
    cwd: ws,
    ...(i.signal ? { signal: i.signal } : {}),
    timeoutMs,
    recordGroup,
    sandbox,
    onStart: (command) => {
      tails.set(command, new OutputTail());
      progress({ type: 'test_start', command });
    },
    onOutput: (command, stream, text) => {
      tails.get(command)?.add(text);
      progress({ type: 'test_output', command, stream, text });
    },
    onEnd: (result) => progress({ type: 'test_end', result }),
  });
  if (run.aborted) throw new LandRefused('the landing was interrupted: nothing was moved.', 'aborted');
  if (run.passed) return;
  const failed = run.results.find((r) => r.exit_code !== 0)!;
  const tail = tails.get(failed.command)?.lines() ?? '';
  throw new LandRefused(
    `the tests fail on job ${i.job.id} rebased onto ${onto}: \`${failed.command}\` exited ${failed.exit_code}; ${onto} was not moved.\n` +
      (tail ? `${tail}\n` : '') +
      `Fix it on ${onto} or retry the todo (ii job retry ${i.job.id}); --no-test lands without the tests.`,
    'tests',
  );
}

/**
 * Moves `onto` from `old` to `next`: 'moved' when it is no longer at `old`
 * (nothing done). Where it is checked out, that checkout is fast-forwarded
 * as `git merge --ff-only` does, and a refusal there throws (nothing moved).
 */
async function advance(
  i: LandInput,
  onto: string,
  next: string,
  old: string,
  checkouts: string[],
  progress: (p: LandProgress) => void,
): Promise<'ok' | 'moved'> {
  const reason = `incrementum: land job ${i.job.id}`;
  // Again just before the move: a rebase or merge may have begun while the
  // tests ran.
  await refuseIfBusy(i.vcs, i.repo.root, i.job.id, onto);
  const where = await i.vcs.checkoutsOf(i.repo.root, onto);
  if (where.length === 0)
    return (await i.vcs.casBranch(i.repo.root, onto, next, old, reason)) ? 'ok' : 'moved';
  // A branch is checked out in one worktree at most (git refuses a second).
  const checkout = where[0]!;
  const ff = await i.vcs.fastForwardCheckout(checkout, next, old);
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
      `\nCommit or stash those changes (git stash), then run ii job land ${i.job.id} again.`,
    'checkout',
  );
}

/**
 * The job's workspace, now that its work is on the branch: removed with its
 * branch if no other job has taken it since (its iteration refs stay).
 */
async function releaseJobWorkspace(i: LandInput): Promise<void> {
  const path = i.job.workspace_path;
  if (!path) return;
  const w = i.store.workspaces.list(i.repo.slug).find((x) => x.path === path);
  if (!w || w.status !== 'free') return;
  if (!isInside(workspacesDir(i.stateDir, i.repo.slug), path)) return;
  // Never from under a process still working in it (a shell cd'd there):
  // it stays, free, for ii workspace prune to take once that has ended.
  if (processesIn(path).length > 0) return;
  if (!i.store.workspaces.removeIfFree(path)) return;
  await i.vcs.removeWorkspace(i.repo.root, path).catch(() => {});
  removeOverlays(i.stateDir, path);
  if (w.branch.startsWith('incrementum/ws-')) await i.vcs.deleteBranch(i.repo.root, w.branch);
}
