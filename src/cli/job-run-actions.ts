// The bodies of ii job do | retry | abandon | diff (definitions in job-run.ts).
// Thin: resolve the todo or job, hand the work to src/job, print.
import { UserError } from '../errors.js';
import { loadIterationDiff, locateIteration, locateIterationPair } from '../history/iteration-diff.js';
import { abandonJob } from '../job/abandon.js';
import { cleanUpDeadRunner, describeCleanup } from '../job/dead-runner.js';
import { checkIdentity } from '../doctor/repo-checks.js';
import { loadConfig } from '../job/config.js';
import { checkLaunch, launchJob, type JobDeps } from '../job/launch.js';
import { assertRetryable } from '../job/retry.js';
import { localProbe } from '../job/stale.js';
import { isStale } from '../model/derive.js';
import type { Job } from '../model/job.js';
import type { Todo } from '../model/todo.js';
import type { NewTodo, StateStore } from '../state/api.js';
import { appendEvent } from '../state/events.js';
import { parseTodoTemplate, todoTemplate } from '../todo/edit-template.js';
import { currentRepo, withStore, type RepoContext } from './context.js';
import { editText } from './editor.js';
import { printJson, style } from './format.js';
import { redactDeep } from '../text/redact.js';
import { shownText } from '../text/shown.js';
import { renderIterationDiff } from './job-diff-view.js';
import { jobContextLines } from './job-context.js';
import { progressPrinter } from './job-progress.js';
import type { DoOptions } from './job-run.js';
import { keepRunningWithoutOutput } from './output.js';
import { createProgress } from './progress.js';

/** The real collaborators, loaded only by the commands that run jobs. */
async function realDeps(): Promise<JobDeps> {
  const { realJobDeps } = await import('../job/wiring.js');
  return realJobDeps();
}

const autoCommitFlag = (v: string | undefined): boolean | undefined => {
  if (v === undefined) return undefined;
  if (/^(true|yes|on|1)$/i.test(v)) return true;
  if (/^(false|no|off|0)$/i.test(v)) return false;
  throw new UserError(`--auto-commit takes true or false, not "${v}".`);
};

/**
 * A job runs for minutes: a damaged store is worth finding (quick_check, ~170 ms
 * on a 10,000-job store) before it creates a todo, a workspace and a job.
 */
const RUN_CHECK = { integrityCheck: true };

export async function jobDo(id: string | undefined, o: DoOptions): Promise<void> {
  const repo = currentRepo();
  const config = loadConfig(repo.root);
  const deps = await realDeps();
  const run = {
    ...(o.rev ? { rev: o.rev } : {}),
    ...(o.agent ? { agent: o.agent } : {}),
    autoCommit: autoCommitFlag(o.autoCommit === true ? 'true' : (o.autoCommit as string | undefined)),
    ...(o.allowFailingBaseline ? { allowFailingBaseline: true } : {}),
  };
  // Before a todo is created (or an editor opened for one): a start that
  // fails on something known now must not leave a stray open todo behind.
  await checkLaunch(deps, { repo, config, ...run });
  const code = await withStore(async (store) => {
    const todo = resolveOrCreateTodo(store, repo, id, o);
    return runJob(deps, store, repo, config, todo, run);
  }, RUN_CHECK);
  process.exitCode = code;
}

export async function jobRetry(
  id: string,
  o: { agent?: string; rev?: string; allowFailingBaseline?: boolean },
): Promise<void> {
  const repo = currentRepo();
  const config = loadConfig(repo.root);
  const deps = await realDeps();
  const code = await withStore(async (store) => {
    const old = store.jobs.resolve(repo.slug, id);
    const stale = isStale(old, Date.now(), localProbe);
    assertRetryable(old, stale);
    if (!store.todos.get(repo.slug, old.todo_id))
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
    const todo = store.todos.get(repo.slug, old.todo_id);
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

export async function jobAbandon(id: string, o: { reason?: string; wait?: boolean }): Promise<void> {
  const repo = currentRepo();
  const deps = await realDeps();
  await withStore(async (store) => {
    const job = store.jobs.resolve(repo.slug, id);
    const r = await abandonJob(store, store.dir, job, {
      ...(o.reason ? { reason: o.reason } : {}),
      probe: localProbe,
      finishSession: (sessionId) => deps.finishSession(store, sessionId, 'failed').then(() => {}),
    });
    if (r.kind === 'cleaned') {
      process.stdout.write(`job ${job.id} abandoned (its runner was gone): ${describeCleanup(r.cleanup)}.\n`);
      return;
    }
    process.stdout.write(`asked the runner of job ${job.id} (pid ${job.pid ?? '?'}) to abandon it.\n`);
    if (!o.wait) return;
    const end = Date.now() + 30_000;
    while (Date.now() < end) {
      const now = store.jobs.get(job.id);
      if (now && now.status !== 'active') {
        process.stdout.write(`job ${job.id} is ${now.status}.\n`);
        return;
      }
      await new Promise((res) => setTimeout(res, 200));
    }
    throw new UserError(
      `job ${job.id} is still running after 30 s; is its runner (pid ${job.pid}) stuck?`,
      1,
    );
  });
}

export async function jobDiff(
  id: string,
  o: { change?: number; iteration?: number; from?: string; to?: string; json?: boolean },
): Promise<void> {
  if ((o.from !== undefined || o.to !== undefined) && (o.change !== undefined || o.iteration !== undefined))
    throw new UserError('give either --change/--iteration or --from/--to, not both.');
  const repo = currentRepo();
  const job = await withStore((s) => s.jobs.resolve(repo.slug, id));
  const last = () => {
    const r = locateIteration(job);
    return `${r.change}.${r.iteration}`;
  };
  const ref =
    o.from !== undefined || o.to !== undefined
      ? locateIterationPair(job, o.from ?? last(), o.to ?? last())
      : locateIteration(job, o.change, o.iteration);
  const { GitVcs } = await import('../vcs/git.js');
  const d = await loadIterationDiff(new GitVcs(), job, ref, [repo.root]);
  if (o.json) return printJson(redactDeep(d));
  process.stdout.write(renderIterationDiff(d, d.diff, d.diff_error, style()) + '\n');
}

function resolveOrCreateTodo(
  store: StateStore,
  repo: RepoContext,
  id: string | undefined,
  o: DoOptions,
): Todo {
  if (id) {
    if (o.title) throw new UserError('give either a todo id or --title, not both.');
    return store.todos.resolve(repo.slug, id);
  }
  const given: NewTodo = {
    title: o.title ?? '',
    description: o.desc ?? '',
    type: o.type,
    priority: o.priority,
    deps: o.deps,
  };
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const wantEditor = o.edit === true || (o.edit !== false && !o.title);
  if (wantEditor) {
    if (!interactive)
      throw new UserError(
        'no todo given: pass a todo id, or --title "..." to create one (the editor opens only on a terminal).',
      );
    return store.todos.create(repo.slug, parseTodoTemplate(editText(todoTemplate(given))));
  }
  if (!given.title) throw new UserError('no todo given: pass a todo id, or --title "..." to create one.');
  return store.todos.create(repo.slug, given);
}

/** Runs one job in the foreground with progress on stderr; returns the exit code. */
async function runJob(
  deps: JobDeps,
  store: StateStore,
  repo: RepoContext,
  config: ReturnType<typeof loadConfig>,
  todo: Todo,
  o: {
    rev?: string;
    agent?: string;
    autoCommit?: boolean | undefined;
    retriedFrom?: string;
    allowFailingBaseline?: boolean;
  },
): Promise<number> {
  const st = style(process.stderr.isTTY === true && !process.env.NO_COLOR);
  const progress = createProgress(process.stderr);
  const printer = progressPrinter(progress, st);
  const { writeJournal } = await import('../journal/index.js');
  // A closed pipe (ii job do | head) must not kill the runner, not even while
  // it claims the workspace: the job runs on to its end with its output
  // dropped, and its event log says so.
  let jobId: string | null = null;
  keepRunningWithoutOutput(() => {
    if (jobId)
      appendEvent(store.dir, jobId, 'warning', {
        message: 'the output of ii job do was closed (a pipe or terminal); the job runs on without it',
      });
  });
  const launched = await launchJob(deps, {
    store,
    stateDir: store.dir,
    repo,
    config,
    todo,
    ...(o.rev ? { rev: o.rev } : {}),
    ...(o.agent ? { agent: o.agent } : {}),
    ...(o.autoCommit !== undefined ? { autoCommit: o.autoCommit } : {}),
    ...(o.retriedFrom ? { retriedFrom: o.retriedFrom } : {}),
    ...(o.allowFailingBaseline ? { allowFailingBaseline: true } : {}),
    onEvent: printer.onEvent,
    onFinished: async (job) => {
      await writeJournal(store, store.dir, job.id, { repoRoot: repo.root });
    },
  });
  const { job, runner, session, workspacePath, baseRev, changeId } = launched;
  jobId = job.id;
  for (const c of launched.endedStale)
    progress.line(`job ${c.job.id} of this todo failed (its runner was gone): ${describeCleanup(c)}`);
  const context = jobContextLines(
    {
      jobId: job.id,
      todo: store.todos.get(repo.slug, todo.id) ?? todo,
      sessionId: session.id,
      workspaceName: store.workspaces.list(repo.slug).find((w) => w.path === workspacePath)?.branch,
      workspacePath,
      baseRev,
      changeId,
      retriedFrom: o.retriedFrom,
    },
    st,
  );
  for (const line of context) progress.line(line);
  const ident = checkIdentity(repo.root);
  if (!ident.ok) progress.line(st.yellow(`warning: ${ident.detail}; ii doctor says how to set one`));

  // Ctrl-C, SIGTERM or a closed terminal (SIGHUP) in any stage: the runner
  // cancels the agent and the tests, marks the job failed and releases the
  // workspace; a second signal is ignored so that cleanup is never cut short.
  const onSignal = (sig: NodeJS.Signals) => {
    progress.line(st.yellow(`${sig}: stopping the job (cancelling the agent, releasing the workspace)…`));
    runner.cancel({ status: 'failed', reason: `interrupted (${sig})` });
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const sig of signals) process.on(sig, onSignal);
  let final: Job;
  try {
    final = await runner.run();
  } finally {
    for (const sig of signals) process.off(sig, onSignal);
    progress.done();
  }
  return report(final, printer.state.finalCommit, st);
}

function report(job: Job, finalCommit: string | null, st: ReturnType<typeof style>): number {
  const changes = job.changes.length;
  if (job.status === 'completed') {
    const last = finalCommit ?? job.changes.at(-1)?.commits.at(-1)?.commit_id ?? null;
    process.stderr.write(
      st.green(`job ${job.id} completed`) +
        ` · ${changes} change${changes === 1 ? '' : 's'}` +
        (last ? ` · final commit ${last}` : ' · no code changes were needed') +
        '\n',
    );
    if (last) {
      process.stderr.write(
        `bring it into your branch: git merge --ff-only ${last}  (or: git cherry-pick ${(job.base_rev ?? '').slice(0, 10)}..${last.slice(0, 10)})\n`,
      );
      process.stdout.write(`${last}\n`);
    }
    return 0;
  }
  process.stderr.write(
    st.red(`job ${job.id} ${job.status}`) +
      `: ${job.failure_reason ? shownText(job.failure_reason) : 'no reason recorded'}\n` +
      `see: ii job show ${job.id} · ii job logs ${job.id} · retry: ii job retry ${job.id}\n`,
  );
  return 1;
}
