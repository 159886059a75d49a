// The body of ii job do (definition in index.ts), and the foreground run that
// ii job retry shares. Thin: resolve or create the todo, hand the work to
// src/job, print progress and the outcome.
import { getPriority } from 'node:os';
import { ClaimRefused, UserError } from '../../errors.js';
import { Socket } from 'node:net';
import { BACK_FD, CLAIM_LOST_EXIT, STANDBY_LOW_MS } from '../../job/detached.js';
import { describeCleanup } from '../../job/dead-runner.js';
import { checkIdentity } from '../../doctor/repo-checks.js';
import { loadConfig } from '../../job/config.js';
import { checkLaunch, launchJob, type JobDeps, type Launched } from '../../job/launch.js';
import { sandboxState, sandboxWarning } from '../../proc/sandbox/sandbox.js';
import { loadExeca } from '../../proc/exec-in-group.js';
import { runTests } from '../../job/test-runner.js';
import { mark } from '../../proc/trace.js';
import { bootLow, sessionNice, setOwnSessionNice, stepAside } from '../../proc/priority.js';
import { Prompts } from '../../job/prompts.js';
import type { Job } from '../../model/job.js';
import { changesMade, latestCommit } from '../../model/derive.js';
import type { Todo } from '../../model/todo.js';
import type { NewTodo } from '../../state/api.js';
import type { AsyncStateStore } from '../../state/async-api.js';
import { appendEvent, warmEventParsers } from '../../state/events.js';
import { STORE_NAMES } from '../../state/lazy-stores.js';
import { shownText } from '../../text/shown.js';
import { parseTodoTemplate, todoTemplate } from '../../todo/edit-template.js';
import { currentRepo, withStore, type RepoContext } from '../context.js';
import { editText } from '../../todo/editor.js';
import { reportError } from '../exit.js';
import { style } from '../format.js';
import { keepRunningWithoutOutput } from '../output.js';
import { createProgress } from '../progress.js';
import { jobContextLines } from './context-lines.js';
import { shipJobLogs } from './log-shipping.js';
import { tuneHeapForRunner } from './heap.js';
import { realDeps } from './deps.js';
import type { DoOptions } from './options.js';
import { progressPrinter } from './progress-printer.js';

const autoCommitFlag = (v: string | undefined): boolean | undefined => {
  if (v === undefined) return undefined;
  if (/^(true|yes|on|1)$/i.test(v)) return true;
  if (/^(false|no|off|0)$/i.test(v)) return false;
  throw new UserError(`--auto-commit takes true or false, not "${v}".`);
};

/**
 * A job runs for minutes: a damaged store is worth finding (quick_check, ~170 ms
 * on a 10,000-job store) before it creates a todo, a workspace and a job, and
 * space is kept to record its end should the disk fill (state/reserve.ts).
 */
export const RUN_CHECK = { integrityCheck: true, reserve: true };

const runOptions = (o: DoOptions) => ({
  ...(o.rev ? { rev: o.rev } : {}),
  ...(o.agent ? { agent: o.agent } : {}),
  autoCommit: autoCommitFlag(o.autoCommit === true ? 'true' : (o.autoCommit as string | undefined)),
  ...(o.allowFailingBaseline ? { allowFailingBaseline: true } : {}),
});

export async function jobDo(id: string | undefined, o: DoOptions): Promise<void> {
  if (o.standby) return standby(id, o);
  // ii run's cold runner (no standby was ready), started with others: its start at the floor, up to its first prompt.
  if (o.backlog && o.bootLow) {
    bootLow();
    mark('boot_low');
  }
  const repo = currentRepo();
  const config = loadConfig(repo.root);
  const deps = await realDeps();
  const run = runOptions(o);
  // Before a todo is created (or an editor opened for one): a start that
  // fails on something known now must not leave a stray open todo behind.
  // (With a todo given, the launch checks the same first.)
  if (!id) await checkLaunch(deps, { repo, config, ...run });
  // A run's jobs (--backlog) do not each say it: ii run did, once.
  const unsandboxed = o.backlog ? null : sandboxWarning(config);
  if (unsandboxed) process.stderr.write(`warning: ${unsandboxed}\n`);
  try {
    const code = await withStore(async (store) => {
      const todo = await resolveOrCreateTodo(store, repo, id, o);
      return runJob(deps, store, repo, config, todo, {
        ...run,
        ...(o.backlog ? { claim: 'ready' } : {}),
        ...(o.backlog && o.toLand ? { toLand: true } : {}),
      });
    }, RUN_CHECK);
    process.exitCode = code;
  } catch (err) {
    // ii run reads this code as "someone else took it": no job was made.
    if (o.backlog && err instanceof ClaimRefused) throw new UserError(err.message, CLAIM_LOST_EXIT);
    throw err;
  }
}

/**
 * How long a standby waits idle before it runs `true` as a test command
 * (runTests: a shell, its own process group, no store credentials), in the
 * checkout, no sandbox. Its first command cost a job ~25 ms of CPU and ~65 ms
 * to its first prompt (bench/handover, jobs long enough that the standby
 * waits). Not at once: in a backlog of quick jobs a standby is often handed
 * its todo as it becomes ready, and the rehearsal then took the cores from
 * that job's checks and claim (boot 17 -> 69 ms).
 */
const STANDBY_REHEARSE_MS = 100;

/**
 * ii run's standby runner (--backlog --standby): everything a job loads is
 * loaded and the store open before its todo is known, so the hand-over costs
 * no process start. The todo id comes as one line on stdin; an end of stdin
 * without one (dismissed, or ii run gone, even killed) ends it at once, having
 * touched nothing. From the hand-over on it is `ii job do <todo> --backlog`:
 * the config read then, the checks, the claim in one transaction, the job.
 *
 * With --back (ii run gives it fd 3, detached.ts spawnStandbyJob) its job's
 * end is not its own: once the job's wrap-up is done it says `back <code>`
 * there and waits for the next todo on stdin, as it did for the first. Only
 * where its stepping aside for the wrap-up can be undone (its session's
 * autogroup value, not its own nice value: priority.ts): a runner at the
 * floor for good would run every later job there.
 */
async function standby(id: string | undefined, o: DoOptions): Promise<void> {
  if (id || !o.backlog) throw new UserError('--standby is for ii run: it goes with --backlog and no todo.');
  // Before anything is started: fd 3 would be inherited by all it starts.
  const back = o.back ? openBackChannel() : null;
  // ii run started it with its session at the floor (spawnStandbyJob): back
  // at its own nice value, the jobs' level, after a while or once handed a todo.
  const raise = () => setOwnSessionNice(getPriority());
  const low = setTimeout(raise, Math.max(0, STANDBY_LOW_MS - process.uptime() * 1000));
  low.unref();
  const repo = currentRepo();
  const deps = await realDeps();
  await import('../../journal/index.js'); // what runJob loads at the end
  await warmUp(deps, repo.root, o);
  const todos = lines(process.stdin);
  try {
    const code = await withStore(async (store) => {
      // Each store the job uses prepares its statements when first used.
      for (const name of STORE_NAMES) void store[name];
      mark('standby_ready');
      let rehearsing: Promise<void> | null = null;
      const rehearsal = setTimeout(() => {
        rehearsing = runTests({ commands: ['true'], cwd: repo.root, timeoutMs: 10_000 }).then(
          () => mark('rehearsed'),
          () => {}, // the job's own commands say what is wrong
        );
      }, STANDBY_REHEARSE_MS);
      // Decided once: whether this process may come back depends on how it was started and where.
      const reusable = back !== null && sessionNice() !== null;
      let jobs = 0;
      for (let code = 0; ;) {
        const handed = await todos.next();
        clearTimeout(rehearsal);
        if (handed === null) {
          await rehearsing; // dismissed: its command is gone before it is (a job's goes on beside it)
          return code;
        }
        clearTimeout(low);
        raise();
        mark('handed', { todo: handed });
        // Come back: this job's output follows the last one's in the same log.
        if (jobs++ > 0) process.stderr.write(`\n-- todo ${shownText(handed)}: this runner's next job --\n`);
        code = await standbyJob(deps, store, repo, handed, o, reusable);
        // Not back: exits with its job's code (ii run reads it, or its store).
        if (!reusable || !(await back!.tell(code))) return code;
        mark('back', { code });
      }
    }, RUN_CHECK);
    process.exitCode = code;
  } finally {
    todos.close();
    back?.close();
  }
}

/** One job of a standby, from its todo id: its exit code (CLAIM_LOST_EXIT when its claim was refused). */
async function standbyJob(
  deps: JobDeps,
  store: AsyncStateStore,
  repo: RepoContext,
  handed: string,
  o: DoOptions,
  reusable: boolean,
): Promise<number> {
  const config = loadConfig(repo.root);
  const run = runOptions(o);
  try {
    const todo = await store.todos.resolve(repo.slug, handed);
    mark('todo_read');
    return await runJob(deps, store, repo, config, todo, {
      ...run,
      claim: 'ready',
      ...(o.toLand ? { toLand: true } : {}),
      ...(reusable ? { reusable: true } : {}),
    });
  } catch (err) {
    if (!(err instanceof ClaimRefused)) throw err;
    // ii run reads this code as "someone else took it": no job was made.
    const refused = new UserError(err.message, CLAIM_LOST_EXIT);
    if (!reusable) throw refused;
    return reportError(refused); // said as its exit would have said it; it stays for the next
  }
}

/**
 * The standby's side of fd 3 (BACK_FD): ii run's socket, which the agents,
 * tests and git it starts do not inherit (libuv starts them with only the
 * stdio they are given). Null where there is none (the runner then exits
 * after its job, as one started by hand does).
 */
function openBackChannel(): { tell(code: number): Promise<boolean>; close(): void } | null {
  let socket: Socket;
  try {
    socket = new Socket({ fd: BACK_FD, readable: false, writable: true });
  } catch {
    return null;
  }
  socket.on('error', () => {}); // ii run gone: the write below says so
  socket.unref();
  return {
    tell: (code) =>
      new Promise((resolve) => {
        if (socket.destroyed) return resolve(false);
        // Not written (EPIPE: ii run gone): this runner ends with its job.
        socket.write(`back ${code}\n`, (err) => resolve(!err));
      }),
    close: () => socket.destroy(),
  };
}

/**
 * The lines of `input`, one by one (null once it has ended), read on from one
 * job to the next: ii run writes the next todo only once this runner said it
 * is back, and its end (dismissed, or ii run gone) is kept until asked.
 */
function lines(input: NodeJS.ReadStream): { next(): Promise<string | null>; close(): void } {
  const queue: string[] = [];
  let ended = false;
  let buf = '';
  let wake: (() => void) | null = null;
  const onData = (d: Buffer | string) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) queue.push(line);
    }
    wake?.();
  };
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  input.on('data', onData);
  input.on('end', onEnd);
  input.on('error', onEnd);
  return {
    async next() {
      while (queue.length === 0 && !ended) await new Promise<void>((r) => (wake = r));
      wake = null;
      return queue.shift() ?? null;
    },
    close() {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onEnd);
      input.pause();
      input.destroy();
    },
  };
}

/**
 * What every job does first, done once while the standby waits and its
 * results thrown away, so the hand-over does not wait on it: the sandbox
 * probed (one or two bwrap runs, kept for the process; 14 to 80 ms of the
 * hand-over in bench/handover.bench.js under load), execa loaded (the
 * setup and the tests run through it), the config, the templates and the
 * agent read once so their code is compiled, the base's git process started.
 * Reads only: all of it is read again at the hand-over, and a config broken
 * now says so then.
 */
async function warmUp(deps: JobDeps, root: string, o: DoOptions): Promise<void> {
  try {
    const config = loadConfig(root);
    if (config.sandbox.mode !== 'off') sandboxState(config);
    new Prompts(root).loadAll();
    deps.resolveAgent(config, o.agent);
  } catch {} // said at the hand-over, where the job's checks read it again
  // The base (ii run gives --rev): its answer is read again at the
  // hand-over, through the git process this starts (GitVcs.resolveBase).
  // Not waited for: the standby is ready as soon as its code is loaded.
  const { rev } = runOptions(o);
  if (rev !== undefined) deps.vcs.resolveBase(root, rev).catch(() => {});
  await loadExeca();
  // Node loads these on their first use, which was the agent's start, as the
  // ACP connection wraps its pipes (web streams, TextDecoder): 9 ms of CPU
  // between the hand-over and the first prompt, loaded here instead. A
  // writer's first release makes its error's realm (Node's internal global,
  // a vm context) at the ACP connection's first message.
  new TextDecoder().decode(new TextEncoder().encode(''));
  new ReadableStream().cancel().catch(() => {});
  new WritableStream().abort().catch(() => {});
  new WritableStream().getWriter().releaseLock();
  // The events a job appends up to its first prompt: each type's parser is
  // compiled at its first use.
  warmEventParsers([
    'workspace',
    'test_start',
    'output',
    'test_end',
    'baseline',
    'stage',
    'change_started',
    'agent_start',
  ]);
}

async function resolveOrCreateTodo(
  store: AsyncStateStore,
  repo: RepoContext,
  id: string | undefined,
  o: DoOptions,
): Promise<Todo> {
  if (id) {
    if (o.title) throw new UserError('give either a todo id or --title, not both.');
    return await store.todos.resolve(repo.slug, id);
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
    return await store.todos.create(repo.slug, parseTodoTemplate(editText(todoTemplate(given))));
  }
  if (!given.title) throw new UserError('no todo given: pass a todo id, or --title "..." to create one.');
  return await store.todos.create(repo.slug, given);
}

/** Runs one job in the foreground with progress on stderr; returns the exit code. */
export async function runJob(
  deps: JobDeps,
  store: AsyncStateStore,
  repo: RepoContext,
  config: ReturnType<typeof loadConfig>,
  todo: Todo,
  o: {
    rev?: string;
    agent?: string;
    autoCommit?: boolean | undefined;
    retriedFrom?: string;
    allowFailingBaseline?: boolean;
    claim?: 'manual' | 'ready';
    toLand?: boolean;
    /** A standby that may come back for another job: it steps aside only as far as it can come back from. */
    reusable?: boolean;
  },
): Promise<number> {
  tuneHeapForRunner();
  const st = style(process.stderr.isTTY === true && !process.env.NO_COLOR);
  const progress = createProgress(process.stderr);
  const printer = progressPrinter(progress, st);
  const { writeJournal } = await import('../../journal/index.js');
  // With a shared store, the job's log goes there too, for other machines.
  const shipping = shipJobLogs(store.dir, (m) => progress.line(st.yellow(`warning: ${m}`)));
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
  // Ctrl-C, SIGTERM or a closed terminal (SIGHUP) in any stage, from the
  // moment the job's first agent may be starting (launchJob's onRunner): the
  // runner cancels the agent and the tests, marks the job failed and
  // releases the workspace; a second signal is ignored so that cleanup is
  // never cut short. Before that, nothing of the job's runs yet: the signal
  // ends ii as it would with no handler (the claim and the workspace are
  // cleaned up as a dead runner's).
  let stoppable: Launched['runner'] | null = null;
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const unhandle = () => {
    for (const sig of signals) process.off(sig, onSignal);
  };
  const onSignal = (sig: NodeJS.Signals) => {
    if (!stoppable) {
      unhandle();
      process.kill(process.pid, sig);
      return;
    }
    progress.line(st.yellow(`${sig}: stopping the job (cancelling the agent, releasing the workspace)…`));
    stoppable.cancel({ status: 'failed', reason: `interrupted (${sig})` });
  };
  for (const sig of signals) process.on(sig, onSignal);
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
    ...(o.claim ? { claim: o.claim } : {}),
    ...(o.toLand ? { toLand: true } : {}),
    onEvent: printer.onEvent,
    onFinished: async (job) => {
      await writeJournal(store, store.dir, job.id, { repoRoot: repo.root });
    },
    // ii run hands this job's slot to the next one as its end is recorded:
    // what is left here (snapshot, release, journal) must not slow its start
    // (below the jobs' priority, unless they are at the floor: priority.ts).
    ...(o.claim === 'ready' ? { onEndRecorded: () => stepAside(!o.reusable) } : {}),
    onRunner: (r) => (stoppable = r),
  }).catch(async (err: unknown) => {
    // launchJob ended the agent it started, if any.
    unhandle();
    await shipping?.close();
    throw err;
  });
  const { job, runner, session, workspacePath, baseRev, baseRef, changeId } = launched;
  jobId = job.id;
  try {
    for (const c of launched.endedStale)
      progress.line(`job ${c.job.id} of this todo failed (its runner was gone): ${describeCleanup(c)}`);
    const context = jobContextLines(
      {
        jobId: job.id,
        todo: (await store.todos.get(repo.slug, todo.id)) ?? todo,
        sessionId: session.id,
        workspaceName: (await store.workspaces.list(repo.slug)).find((w) => w.path === workspacePath)?.branch,
        workspacePath,
        baseRev,
        baseRef,
        changeId,
        retriedFrom: o.retriedFrom,
      },
      st,
    );
    for (const line of context) progress.line(line);
    // ii run checks it once for all its jobs.
    const ident = o.claim === 'ready' ? { ok: true, detail: '' } : checkIdentity(repo.root);
    if (!ident.ok) progress.line(st.yellow(`warning: ${ident.detail}; ii doctor says how to set one`));
  } catch (err) {
    // Not run after all: the agent started for it goes, unrecorded (a signal
    // meanwhile still stops it: the handlers go after).
    await runner.discardEarly();
    unhandle();
    await shipping?.close();
    throw err;
  }
  let final: Job;
  try {
    final = await runner.run();
  } finally {
    unhandle();
    await shipping?.close();
    progress.done();
  }
  // A backlog runner's log does not say how to land: ii run does (or lands
  // it itself), and the board has m.
  return report(final, printer.state.finalCommit, st, o.claim !== 'ready');
}

function report(
  job: Job,
  finalCommit: string | null,
  st: ReturnType<typeof style>,
  landHint: boolean,
): number {
  // The last pass's change, left with no commit, is no change made.
  const changes = changesMade(job);
  if (job.status === 'completed') {
    const last = finalCommit ?? latestCommit(job)?.commit_id ?? null;
    process.stderr.write(
      st.green(`job ${job.id} completed`) +
        ` · ${changes} change${changes === 1 ? '' : 's'}` +
        (last ? ` · final commit ${last}` : ' · no code changes were needed') +
        '\n',
    );
    if (last) {
      if (landHint)
        process.stderr.write(
          `land it (rebased onto the branch as it is now, tested there): ii job land ${job.id}\n`,
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
