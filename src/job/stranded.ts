// Ending, for it, the session of a runner killed after its job ended
// (model/stranded.ts): as the runner would have, done for a completed job
// (its todo done), failed otherwise (its todo reopened), its workspace
// freed. ii run does it for the todos its copy shows so, the board for
// those it holds, ii job list and ii todo list for those they meet. ii
// workspace prune ends such sessions its own way, by the workspaces it
// looks at (session/workspaces.ts).
import { strandedJobs } from '../model/stranded.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { reopenUnheld } from '../session/session.js';
import { runnerExitedIn } from './runner-gone.js';

/** Ends a session as its runner would have: 'done' marks the todo done, 'failed' reopens it; both free the workspace. */
export type EndSession = (sessionId: string, outcome: 'done' | 'failed') => Promise<void>;

export interface SettledTodo {
  todo_id: string;
  job_id: string;
  /** How the session was ended: done (the job completed), failed otherwise. */
  outcome: 'done' | 'failed';
}

/**
 * Settles the todo that job `jobId` left in progress, when that job ended,
 * no job is active on the todo and its runner is provably gone (this
 * machine, its pid dead or reused): a runner still alive is ending the
 * session itself, and another machine's runner is that machine's to judge.
 * null when there was nothing to do.
 */
export async function settleStranded(
  store: AsyncStateStore,
  jobId: string,
  endSession: EndSession,
): Promise<SettledTodo | null> {
  const job = await store.jobs.get(jobId);
  if (!job || job.status === 'active') return null;
  if ((await store.todos.get(job.repo, job.todo_id))?.status !== 'in_progress') return null;
  if (!(await runnerExitedIn(store, job))) return null;
  // Read after the todo: a claim writes its job and the todo together, so a
  // job that took the todo since is seen here.
  if ((await store.jobs.activeRunners(job.repo)).some((j) => j.todo_id === job.todo_id)) return null;
  const outcome = job.status === 'completed' ? 'done' : 'failed';
  if (job.session_id && (await store.sessions.get(job.session_id))) {
    // Safe if the session had ended already (killed in its end): the todo and
    // the workspace are settled again, a workspace claimed since untouched.
    await endSession(job.session_id, outcome);
  } else await reopenUnheld(store, job.repo, job.todo_id, job.session_id);
  return { todo_id: job.todo_id, job_id: job.id, outcome };
}

/**
 * Settles every todo of `repo` left so (strandedJobs) whose job's runner is
 * gone. Two small queries when there is none: the todos in progress, then
 * the active jobs; the job briefs only when a todo in progress has no
 * active job on it.
 */
export async function settleStrandedTodos(
  store: AsyncStateStore,
  repo: string,
  endSession: EndSession,
): Promise<SettledTodo[]> {
  const inProgress = await store.todos.list(repo, { status: 'in_progress' });
  if (inProgress.length === 0) return [];
  const held = new Set((await store.jobs.activeRunners(repo)).map((j) => j.todo_id));
  const unheld = inProgress.filter((t) => !held.has(t.id));
  if (unheld.length === 0) return [];
  const out: SettledTodo[] = [];
  for (const j of strandedJobs(unheld, await store.jobs.briefs(repo))) {
    const s = await settleStranded(store, j.id, endSession);
    if (s) out.push(s);
  }
  return out;
}

/** A line for a todo settleStranded settled: what its runner left, what was done. */
export function settledLine(s: SettledTodo): string {
  return s.outcome === 'done'
    ? `todo ${s.todo_id} done: job ${s.job_id} completed, but its runner was gone before it ended the job's session; ended it (workspace released)`
    : `todo ${s.todo_id} open again: job ${s.job_id} ended, but its runner was gone before it ended the job's session; ended it (workspace released)`;
}
