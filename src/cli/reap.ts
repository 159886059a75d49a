// What a command that lists jobs or todos does with a job whose runner is
// gone (killed, crashed): it cleans it up as prune does, saying so on
// stderr, so what it lists is true (the job failed, its todo open again)
// and the next ii run can take the todo without a prune first.
import { runnerGoneIn } from '../job/runner-gone.js';
import { hostName } from '../proc/host.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { endSessionOf } from './job/deps.js';

/**
 * Cleans up the repository's jobs whose runner is gone, and the todos left
 * in progress by a runner killed after its job ended (job/stranded.ts), one
 * line each on stderr, as `by`.
 */
export async function reapDeadRunnersSaying(store: AsyncStateStore, repo: string, by: string): Promise<void> {
  // The cleanup (its event schemas, zod, the process code) is loaded only
  // when there is one to do: most listings meet no dead runner, and loading
  // it was a fifth of `ii job list`'s start.
  let gone = false;
  // runnerGoneIn answers no at once for a job of another machine or with no
  // pid: those are not asked. Asked, each cost an await and a look-up of the
  // host name (a system call): 5 ms of ii job list at 666 active jobs.
  const here = hostName();
  const active = await store.jobs.activeRunners(repo);
  for (const j of active)
    if (j.pid != null && j.host === here && (await runnerGoneIn(store, j))) {
      gone = true;
      break;
    }
  if (gone) {
    const { reapDeadRunners, reapedLine } = await import('../job/dead-runner.js');
    for (const c of await reapDeadRunners(store, repo, { by, finishSession: endSessionOf(store) }))
      process.stderr.write(`${reapedLine(c)}.\n`);
  }
  // A todo in progress that no active job holds is rare: only then is the rest read.
  const held = new Set(active.map((j) => j.todo_id));
  if (!(await store.todos.list(repo, { status: 'in_progress' })).some((t) => !held.has(t.id))) return;
  const { settleStrandedTodos, settledLine } = await import('../job/stranded.js');
  for (const s of await settleStrandedTodos(store, repo, endSessionOf(store)))
    process.stderr.write(`${settledLine(s)}.\n`);
}
