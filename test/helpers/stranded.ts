// A job whose runner was killed between the job's end and its session's:
// the job ended, its session still active, its todo in progress, its
// workspace held (prune-stranded-session, stranded-todo).
import { hostName } from '../../src/proc/host.js';
import { startSession } from '../../src/session/session.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { shortId } from '../../src/state/ids.js';
import type { Vcs } from '../../src/vcs/vcs.js';

/** Above Linux's largest pid: no process has it. */
export const DEAD_PID = 2 ** 22 + 7;

/** A job of repository `slug` at `root` that ended as `status`, run by `pid`, whose session was never ended. */
export async function strandedJob(
  store: AsyncStateStore,
  vcs: Vcs,
  at: { root: string; slug: string },
  status: 'completed' | 'failed',
  pid: number,
) {
  const todo = await store.todos.create(at.slug, { title: 't' });
  const sessionId = shortId(todo.id);
  const job = await store.jobs.claim(
    at.slug,
    { todo_id: todo.id, session_id: sessionId, pid, host: hostName() },
    () => null,
  );
  const started = await startSession(
    store,
    { repoRoot: at.root, slug: at.slug, todoId: todo.id, stateDir: store.dir, sessionId, jobId: job.id },
    vcs,
  );
  await store.jobs.finish(job.id, status, status === 'failed' ? 'its runner was gone' : null);
  return { todo, job, path: started.workspacePath, sessionId };
}
