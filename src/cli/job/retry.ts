// The body of ii job retry (definition in index.ts): a new job for the todo of
// a finished one, run in the foreground like ii job do.
import { UserError } from '../../errors.js';
import { cleanUpDeadRunner, describeCleanup, runnerGoneIn } from '../../job/dead-runner.js';
import { loadConfig } from '../../job/config.js';
import { assertRetryable } from '../../job/retry.js';
import { localProbe } from '../../proc/alive.js';
import { isStale } from '../../model/derive.js';
import { currentRepo, withStore } from '../context.js';
import { realDeps } from './deps.js';
import { RUN_CHECK, runJob } from './do.js';
import type { RetryOptions } from './options.js';

export async function jobRetry(id: string, o: RetryOptions): Promise<void> {
  const repo = currentRepo();
  const config = loadConfig(repo.root);
  const deps = await realDeps();
  const code = await withStore(async (store) => {
    const old = await store.jobs.resolve(repo.slug, id);
    const stale = isStale(old, Date.now(), localProbe) || (await runnerGoneIn(store, old));
    assertRetryable(old, stale);
    if (!(await store.todos.get(repo.slug, old.todo_id)))
      throw new UserError(`the todo of job ${old.id} (${old.todo_id}) no longer exists.`);
    if (old.status === 'active') {
      // Its runner is gone: end what it left running and the job itself
      // before the new job takes a workspace, so no job is left behind.
      const c = await cleanUpDeadRunner(store, store.dir, old, {
        status: 'failed',
        reason: `its runner${old.pid ? ` (pid ${old.pid})` : ''} was gone; retried`,
        finishSession: (sessionId) => deps.finishSession(store, sessionId, 'failed').then(() => {}),
      });
      process.stderr.write(`job ${old.id} failed (its runner was gone): ${describeCleanup(c)}.\n`);
    }
    const todo = await store.todos.get(repo.slug, old.todo_id);
    if (!todo) throw new UserError(`the todo of job ${old.id} (${old.todo_id}) no longer exists.`);
    if (todo.status === 'done')
      process.stderr.write(`note: todo ${todo.id} is done; retrying reopens it while the job runs.\n`);
    return runJob(deps, store, repo, config, todo, {
      ...(o.rev ? { rev: o.rev } : {}),
      ...(o.agent ? { agent: o.agent } : {}),
      autoCommit: old.auto_commit,
      retriedFrom: old.id,
      ...(o.allowFailingBaseline ? { allowFailingBaseline: true } : {}),
    });
  }, RUN_CHECK);
  process.exitCode = code;
}
