// What a done todo came to: a job can complete having changed nothing (the
// agent found nothing to do, or did nothing), and "done" alone reads as work
// made. Derived from the job records, not stored: the job that completed the
// todo last made no commit.
import type { JobBrief } from './backlog.js';
import type { Job } from './job.js';
import type { Todo } from './todo.js';

/** The words beside "done" for a todo whose completing job made nothing. */
export const NO_CHANGES = 'no changes';

/** Whether a job completed without a single commit (iteration) in any of its changes. */
export function completedWithoutCommits(job: Pick<Job, 'status' | 'changes'>): boolean {
  return job.status === 'completed' && job.changes.every((c) => c.commits.length === 0);
}

/**
 * The done todos whose completing job (their last completed one) made no
 * commit. A todo done with no completed job (closed as done by hand, or
 * before incrementum) is not among them: nothing says what it came to.
 */
export function doneWithoutChanges(
  todos: readonly Pick<Todo, 'id' | 'status'>[],
  jobs: readonly Pick<JobBrief, 'todo_id' | 'status' | 'completed_at' | 'started_at' | 'committed'>[],
): Set<string> {
  const done = new Set(todos.filter((t) => t.status === 'done').map((t) => t.id));
  const last = new Map<string, (typeof jobs)[number]>();
  const at = (j: (typeof jobs)[number]) => j.completed_at ?? j.started_at;
  for (const j of jobs) {
    if (j.status !== 'completed' || !done.has(j.todo_id)) continue;
    const seen = last.get(j.todo_id);
    if (!seen || at(j) > at(seen)) last.set(j.todo_id, j);
  }
  return new Set([...last.values()].filter((j) => !j.committed).map((j) => j.todo_id));
}

/** A todo's status as a person reads it: "done · no changes" when its completing job made nothing. */
export function todoStatusWords(todo: Pick<Todo, 'status'>, empty: boolean): string {
  return todo.status === 'done' && empty ? `done · ${NO_CHANGES}` : todo.status;
}
