// A landing's conflict handed to the agent (on-conflict = "agent"): the
// job's commits replayed onto the target taking the job's side, and a new
// change, run by a job runner like any other, that brings the target's side
// back; then the landing is tried again.
import { hostName } from '../proc/host.js';
import { newJobRunner, type JobDeps } from '../job/launch.js';
import type { Job } from '../model/job.js';
import { shortId } from '../state/ids.js';
import { appendEvent } from '../state/events.js';
import type { LandingVcs } from '../vcs/landing-vcs.js';
import type { LandInput, LandResult } from './input.js';
import { LandRefused } from './plan.js';

export interface ToResolve {
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
export async function resolveThenLand(
  input: LandInput,
  onto: string,
  r: ToResolve,
  // landJob, passed in: the flow imports this file, so this one does not import it back.
  landAgain: (input: LandInput) => Promise<LandResult>,
): Promise<LandResult> {
  const { store, repo, job, config } = input;
  const progress = input.onProgress ?? (() => {});
  if (!input.deps)
    throw new LandRefused(
      `job ${job.id} conflicts with ${onto}, and this landing was given no agent to resolve it: nothing was landed.`,
      'conflict',
      r.files,
    );
  const deps = await input.deps();
  const todo = await store.todos.get(repo.slug, job.todo_id);
  if (!todo)
    throw new LandRefused(
      `job ${job.id}'s todo ${job.todo_id} is gone: it cannot go on.`,
      'conflict',
      r.files,
    );
  const conflicts = await describeConflicts(input.vcs, repo.root, onto, r);
  const agent = deps.resolveAgent(config);
  progress({ type: 'resolving', files: r.files, onto });
  appendEvent(input.stateDir, job.id, 'info', {
    message: `landing on ${onto}: ${r.files.length} file${r.files.length === 1 ? '' : 's'} conflict (${r.files.join(', ')}); the job goes on with a change that resolves them`,
  });
  // The job names its new session before the workspace is made, as a claim
  // does: a runner killed while git makes the worktree leaves the job
  // pointing at the session that holds it, so the dead-runner cleanup gives
  // the workspace back instead of leaving it held by no one.
  const sessionId = shortId(todo.id);
  await store.jobs.resume(job.id, process.pid, hostName(), sessionId);
  let started: Awaited<ReturnType<JobDeps['startSession']>>;
  try {
    started = await deps.startSession(store, {
      repoRoot: repo.root,
      slug: repo.slug,
      todoId: job.todo_id,
      sessionId,
      rev: r.replayed,
      stateDir: input.stateDir,
      copy: config.workspace.copy,
      jobId: job.id,
    });
  } catch (err) {
    await store.jobs.finish(job.id, 'completed', null);
    throw new LandRefused(
      `the conflicts could not go to the agent: ${(err as Error).message}\nNothing was landed; the job is completed as before.`,
      'conflict',
      r.files,
    );
  }
  const { session, workspacePath } = started;
  // The job's work now sits on the target's tip: that is its base from here.
  await store.jobs.setSession(job.id, session.id, workspacePath, r.tip);
  const runner = newJobRunner(deps, {
    store,
    stateDir: input.stateDir,
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
  input.signal?.addEventListener('abort', stopRun);
  let done: Job;
  try {
    done = await runner.run();
  } finally {
    input.signal?.removeEventListener('abort', stopRun);
  }
  progress({ type: 'resolved', status: done.status, reason: done.failure_reason });
  if (done.status !== 'completed')
    throw new LandRefused(
      `the change resolving the conflicts with ${onto} did not complete (${done.status}${done.failure_reason ? `: ${done.failure_reason}` : ''}); nothing was landed.\n` +
        `ii job show ${job.id} says what happened; its commits are kept, and ii job retry ${job.id} starts the todo afresh on ${onto}.`,
      'conflict',
      r.files,
    );
  return landAgain({ ...input, job: done, resolutions: (input.resolutions ?? 0) + 1 });
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
