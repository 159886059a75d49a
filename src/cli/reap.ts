// What a command that lists jobs or todos does with a job whose runner is
// gone (killed, crashed): it cleans it up as prune does, saying so on
// stderr, so what it lists is true (the job failed, its todo open again)
// and the next ii run can take the todo without a prune first.
import { runnerGoneIn } from '../job/runner-gone.js';
import { hostName } from '../proc/host.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { endFailedSession } from './job/deps.js';

/** Cleans up the repository's jobs whose runner is gone, one line each on stderr, as `by`. */
export async function reapDeadRunnersSaying(store: AsyncStateStore, repo: string, by: string): Promise<void> {
  // The cleanup (its event schemas, zod, the process code) is loaded only
  // when there is one to do: most listings meet no dead runner, and loading
  // it was a fifth of `ii job list`'s start.
  let gone = false;
  // runnerGoneIn answers no at once for a job of another machine or with no
  // pid: those are not asked. Asked, each cost an await and a look-up of the
  // host name (a system call): 5 ms of ii job list at 666 active jobs.
  const here = hostName();
  for (const j of await store.jobs.activeRunners(repo))
    if (j.pid != null && j.host === here && (await runnerGoneIn(store, j))) {
      gone = true;
      break;
    }
  if (!gone) return;
  const { reapDeadRunners, reapedLine } = await import('../job/dead-runner.js');
  for (const c of await reapDeadRunners(store, repo, { by, finishSession: endFailedSession(store) }))
    process.stderr.write(`${reapedLine(c)}.\n`);
}
