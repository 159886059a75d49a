// What a command that lists jobs or todos does with a job whose runner is
// gone (killed, crashed): it cleans it up as prune does, saying so on
// stderr, so what it lists is true (the job failed, its todo open again)
// and the next ii run can take the todo without a prune first.
import { reapDeadRunners, reapedLine } from '../job/dead-runner.js';
import type { StateStore } from '../state/api.js';
import { endFailedSession } from './job/deps.js';

/** Cleans up the repository's jobs whose runner is gone, one line each on stderr, as `by`. */
export async function reapDeadRunnersSaying(store: StateStore, repo: string, by: string): Promise<void> {
  for (const c of await reapDeadRunners(store, repo, { by, finishSession: endFailedSession(store) }))
    process.stderr.write(`${reapedLine(c)}.\n`);
}
