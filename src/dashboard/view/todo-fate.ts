// What abandoning or retrying a job does to its todo, in the words of the
// board's question: a person pressing `a` or `r` is deciding about the todo
// too (an abandoned job's todo goes back to the backlog, where a runner
// starts it again; a retry reopens a done todo), so the question says so.
import type { Blocker } from '../../model/backlog.js';
import type { Todo } from '../../model/todo.js';
import { blockerWords } from './board.js';
import { shownLine } from '../../text/shown.js';

export interface AbandonFateInput {
  /** The job's todo as it is now (in progress while its job runs). */
  todo: Pick<Todo, 'id' | 'status' | 'title'>;
  /** What would hold the todo back once the job is abandoned (model/backlog.ts blockersOf). */
  blockers: Blocker[];
  /** Whether a backlog runner of the repository is running (it starts what is ready). */
  runner: boolean;
}

/** The todo's fate when its job is abandoned, as one sentence. */
export function abandonFate(o: AbandonFateInput): string {
  // A todo closed or finished meanwhile is left as it is (session.ts finishSession).
  const its = `Its todo “${shownLine(o.todo.title)}”`;
  if (o.todo.status !== 'in_progress') return `${its} stays ${o.todo.status}.`;
  if (o.blockers.length)
    return `${its} goes back to the backlog, blocked (${o.blockers.map((b) => shownLine(blockerWords(b))).join('; ')}), so no runner starts it.`;
  return o.runner
    ? `${its} goes back to the backlog and the runner will start it again.`
    : `${its} goes back to the backlog, ready: R or ii run would start it again.`;
}

/**
 * What a retry does to the todo, as a sentence for its question; null when
 * there is nothing to say beyond "a new job". Throws nothing: a closed todo
 * is refused before asking (retryRefusal).
 */
export function retryFate(todo: Pick<Todo, 'id' | 'status'>): string | null {
  if (todo.status === 'done')
    return `Its todo ${todo.id} is done: the new job reopens it (in progress while it runs, open again if it fails).`;
  return null;
}

/** Why `r` cannot retry a job for its todo, before asking; null when it can. */
export function retryRefusal(todo: Pick<Todo, 'id' | 'status'> | undefined, todoId: string): string | null {
  if (!todo) return `the todo of this job (${todoId}) no longer exists: nothing to retry`;
  if (todo.status === 'closed')
    return `todo ${todo.id} is closed, so a new job would be refused: ii todo reopen ${todo.id}, then r`;
  return null;
}
