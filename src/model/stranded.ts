// A todo left in progress with no job on it. A runner ends its job, then
// its session (which marks the todo done or reopens it and frees the
// workspace): killed between the two, or in the middle of the session's
// end, it leaves the todo in progress for good, and no cleanup meets it,
// since they look for active jobs. Pure: ii run decides it from its copy of
// the backlog, the board from what it holds, ii todo list and ii job list
// from what they read.
import type { JobBrief } from './backlog.js';
import type { Todo } from './todo.js';

/**
 * The last job of each todo of `todos` that is in progress while no job of
 * `briefs` is active on it, when that job has ended: its runner may still
 * be ending its session (then the todo moves on by itself) or be gone
 * (then the todo stays so until someone ends the session for it).
 */
export function strandedJobs<J extends Pick<JobBrief, 'todo_id' | 'status' | 'started_at'>>(
  todos: readonly Pick<Todo, 'id' | 'status'>[],
  briefs: readonly J[],
): J[] {
  const open = new Set(todos.filter((t) => t.status === 'in_progress').map((t) => t.id));
  if (open.size === 0) return [];
  const last = new Map<string, J>();
  for (const j of briefs) {
    if (!open.has(j.todo_id)) continue;
    const seen = last.get(j.todo_id);
    // An active job holds the todo, whichever started last.
    if (seen?.status === 'active') continue;
    if (!seen || j.status === 'active' || j.started_at > seen.started_at) last.set(j.todo_id, j);
  }
  return [...last.values()].filter((j) => j.status !== 'active');
}
