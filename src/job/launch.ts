// Starting a job: the todo's session (a workspace), the job record, and a
// runner wired to them. Shared by `ii job do`, `ii job retry` and anything
// else that starts jobs; the concrete collaborators come in as JobDeps.
import { hostName } from '../proc/host.js';
import type { AfterImplement, AgentSpec } from '../agent/types.js';
import { asDiskFull, DiskFullError, UserError } from '../errors.js';
import { isStale } from '../model/derive.js';
import { claimRefusal } from '../model/backlog.js';
import type { Job } from '../model/job.js';
import { jobRefsRemote } from '../model/remote.js';
import type { Session } from '../model/session.js';
import type { Todo } from '../model/todo.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { shortId } from '../state/ids.js';
import { appendEvent } from '../state/events.js';
import { workspacesDir } from '../state/paths.js';
import { databaseUrl } from '../state/open-async.js';
import type { Base, Vcs } from '../vcs/vcs.js';
import { newChangeId } from '../vcs/change-id.js';
import { hasRemoteSync } from '../vcs/remote-config.js';
import type { Config } from '../model/config.js';
import { requireSandbox } from '../proc/sandbox/sandbox.js';
import { cleanUpDeadRunner, runnerGoneIn, type DeadRunnerCleanup } from './dead-runner.js';
import { recordDespiteFullDisk } from './full-disk.js';
import { Prompts } from './prompts.js';
import { workspaceGoneReason } from './workspace-gone.js';
import { JobRunner, requireTestCommands } from './runner.js';
import type { JobEvent } from '../model/event.js';
import type { JobRunnerOptions, StartAgent } from './runner-types.js';
import { localProbe } from '../proc/alive.js';
import { mark } from '../proc/trace.js';
import type { SessionStartInput } from '../session/index.js';
import { setupInputProblem } from '../session/setup-check.js';

/** The concrete collaborators of a job (src/cli/job/wiring.ts has the real ones; newJobRunner wires a runner to them). */
export interface JobDeps {
  vcs: Vcs;
  startAgent: StartAgent;
  resolveAgent: (config: Config, override?: string) => AgentSpec;
  startSession: (
    store: AsyncStateStore,
    o: SessionStartInput,
  ) => Promise<{
    session: Session;
    workspacePath: string;
    baseRev: string;
    created?: boolean;
    keptFolder?: boolean;
  }>;
  finishSession: (store: AsyncStateStore, sessionId: string, outcome: 'done' | 'failed') => Promise<unknown>;
  afterImplement?: AfterImplement;
}

export interface LaunchInput {
  store: AsyncStateStore;
  stateDir: string;
  repo: { root: string; slug: string };
  config: Config;
  todo: Todo;
  rev?: string;
  /** --agent: a preset name or a path. */
  agent?: string;
  autoCommit?: boolean;
  retriedFrom?: string;
  /** Go on when the tests already fail on the untouched base. */
  allowFailingBaseline?: boolean;
  onEvent?: (e: JobEvent) => void;
  onFinished?: (job: Job) => void | Promise<void>;
  /** See JobRunnerOptions.onEndRecorded. */
  onEndRecorded?: () => void;
  /**
   * How the todo is claimed: 'manual' (default; a person chose it: refused
   * only while another job holds it, a dead runner's job is ended first) or
   * 'ready' (ii run: refused unless the todo is ready, model/backlog.ts).
   */
  claim?: 'manual' | 'ready';
  /** Started by a landing runner (ii run --land): the job is recorded as to land, with its claim. */
  toLand?: boolean;
  /**
   * Called with the job's runner just before its first agent starts (before
   * this returns): from then on, stopping the job (runner.cancel) also ends
   * that agent, and a stop before the runner's run() ends the job there.
   */
  onRunner?: (runner: JobRunner) => void;
}

export interface Launched {
  job: Job;
  runner: JobRunner;
  session: Session;
  workspacePath: string;
  baseRev: string;
  /** What the base was taken from (the checked-out branch, --rev, or HEAD), to show beside baseRev. */
  baseRef: string;
  /** The change the first implement pass works in, started in the workspace. */
  changeId: string;
  /** Jobs of the todo whose runner was gone, ended (failed) before this one started. */
  endedStale: DeadRunnerCleanup[];
}

/**
 * What a user can get wrong that is known before anything is created: the
 * test commands, the templates, the agent, the base revision. `ii job do
 * --title` runs it before creating its todo, so a failed start leaves none.
 * Returns the agent to run and the base a job would start from now.
 */
export async function checkLaunch(
  deps: Pick<JobDeps, 'resolveAgent' | 'vcs'>,
  input: Pick<LaunchInput, 'repo' | 'config' | 'rev' | 'agent'>,
): Promise<{ agent: AgentSpec; base: Base }> {
  return checked(deps, input);
}

/** checkLaunch, and the base commit it resolved (the workspace starts there). */
async function checked(
  deps: Pick<JobDeps, 'resolveAgent' | 'vcs'>,
  input: Pick<LaunchInput, 'repo' | 'config' | 'rev' | 'agent'>,
): Promise<{ agent: AgentSpec; base: Base }> {
  // Its git runs while the rest is checked; a check that fails first is said first, as before.
  const resolving = deps.vcs.resolveBase(input.repo.root, input.rev);
  resolving.catch(() => {});
  requireTestCommands(input.config);
  requireSandbox(input.config);
  // [remote] push = true with no such remote: refused now, not a warning at every push.
  jobRefsRemote(input.config, databaseUrl() !== null, hasRemoteSync(input.repo.root));
  new Prompts(input.repo.root).loadAll();
  const agent = deps.resolveAgent(input.config, input.agent);
  const base = await resolving;
  // A setup that cannot work in a workspace fails every job at setup, each
  // spending one of its todo's attempts: refuse before any is made.
  const setup = await setupInputProblem(deps.vcs, input.repo.root, input.config, base);
  if (setup) throw new UserError(`${setup.detail}\n${setup.fix}`);
  return { agent, base };
}

/**
 * Checks everything a user can get wrong before touching anything
 * (checkLaunch, and a job already running on the todo), then starts the
 * session and creates the job.
 */
export async function launchJob(deps: JobDeps, input: LaunchInput): Promise<Launched> {
  const { store, repo, todo } = input;
  const { agent, base } = await checked(deps, input);
  mark('checked');
  const config = input.config;
  const mode = input.claim ?? 'manual';
  const endedStale: DeadRunnerCleanup[] = [];
  if (mode === 'manual') {
    const active = (await store.jobs.list(repo.slug, { activeOnly: true })).filter(
      (j) => j.todo_id === todo.id,
    );
    let running: Job | undefined;
    for (const j of active)
      if (!isStale(j, Date.now(), localProbe) && !(await runnerGoneIn(store, j))) {
        running = j;
        break;
      }
    if (running)
      throw new UserError(
        `todo ${todo.id} already has a running job, ${running.id} (${running.stage}). Watch it with ii job show ${running.id}, or stop it with ii job abandon ${running.id}.`,
      );
    // A job on this todo whose runner is gone ends before the new one starts:
    // left active, it would keep its workspace and, abandoned later, reopen the
    // todo under the new job.
    for (const old of active)
      endedStale.push(
        await cleanUpDeadRunner(store, input.stateDir, old, {
          status: 'failed',
          reason: `its runner${old.pid ? ` (pid ${old.pid})` : ''} was gone; a new job was started for the todo`,
          finishSession: (sessionId) => deps.finishSession(store, sessionId, 'failed').then(() => {}),
        }),
      );
  }
  // The claim: the job record and the todo in progress, in one transaction
  // that checks the todo may still be taken. From here the job holds the
  // todo; whatever fails below ends the job, so nothing is left held. The
  // job names its session from the start: a runner killed after the
  // workspace is claimed but before the session is recorded (git worktree
  // add takes a while) leaves the job pointing at that workspace, which its
  // cleanup then releases.
  const sessionId = shortId(todo.id);
  const job = await store.jobs.claim(
    repo.slug,
    {
      todo_id: todo.id,
      session_id: sessionId,
      auto_commit: input.autoCommit ?? config.job['auto-commit'],
      retried_from: input.retriedFrom ?? null,
      pid: process.pid,
      host: hostName(),
      // In the claim's transaction: a landing runner killed at any moment
      // after this leaves the job to land, for the next one to land.
      ...(input.toLand ? { to_land: true } : {}),
    },
    (todos, jobs) => claimRefusal(todo.id, todos, jobs, { mode, maxAttempts: config.run['max-attempts'] }),
  );
  mark('claim', { job: job.id });
  // The first change is named before the job starts, so the job's context
  // names it from the first line; the runner makes it (record and refs)
  // when it enters implementing (the job change tracking spec), so a job
  // that never gets there leaves no ref for a change no record holds.
  const changeId = newChangeId();
  // Set where it is made (wire): in startSession's onFolder, or after it.
  let runner = null as JobRunner | null;
  const wire = (workspacePath: string, current: Todo): JobRunner => {
    runner = newJobRunner(deps, {
      store,
      stateDir: input.stateDir,
      agent,
      config,
      jobId: job.id,
      todo: current,
      repoRoot: repo.root,
      workspacePath,
      baseRev: base.sha,
      sessionId,
      firstChangeId: changeId,
      ...(input.allowFailingBaseline ? { allowFailingBaseline: true } : {}),
      ...(input.onEvent ? { onEvent: input.onEvent } : {}),
      ...(input.onFinished ? { onFinished: input.onFinished } : {}),
      ...(input.onEndRecorded ? { onEndRecorded: input.onEndRecorded } : {}),
    });
    // The caller is given the runner before its first agent starts, so that
    // from here on a Ctrl-C stops the job, and the agent with it
    // (runner.cancel), rather than ending the process and leaving the agent
    // behind.
    input.onRunner?.(runner);
    return runner;
  };
  // The agent's start (a process, ACP's initialize and session/new) is the
  // longest step to the first prompt. In a free workspace kept for reuse it
  // starts as the workspace is claimed, beside its reset, and is named the
  // workspace (session/new) once that is made (`made`); otherwise as the
  // workspace is made, beside the records below and the runner's own start.
  // Started after the records, its start was the first prompt's last wait:
  // 30 to 36 ms of a hand-over's median. Started as the workspace was made,
  // still: beside the reset, a backlog's hand-over (job end → next first
  // prompt, bench/handover.bench.js, medians, paired) took 227 ms, not 262,
  // with --jobs 1, and 386 ms, not 397, with --jobs 2 on a 2-core machine
  // whose cores the other job's turns keep busy (the reset then waits for
  // them too). A real agent's start (seconds) hides the whole reset.
  const made = Promise.withResolvers<void>();
  made.promise.catch(() => {}); // an early agent's start meets it, and is discarded
  let started: Awaited<ReturnType<JobDeps['startSession']>>;
  const t0 = performance.now();
  try {
    started = await deps.startSession(store, {
      repoRoot: repo.root,
      slug: repo.slug,
      todoId: todo.id,
      ...(input.rev ? { rev: input.rev } : {}),
      base: base.sha,
      stateDir: input.stateDir,
      copy: config.workspace.copy,
      jobId: job.id,
      sessionId,
      onFolder: async (path) =>
        wire(path, (await store.todos.get(repo.slug, todo.id)) ?? todo).startAgentEarly(made.promise),
    });
  } catch (err) {
    made.reject(err);
    // Its agent, started in the folder claimed, goes unrecorded.
    await runner?.discardEarly();
    // git worktree add (or the copy of [workspace] copy) met a full disk.
    const full = asDiskFull(err, workspacesDir(input.stateDir, repo.slug));
    await recordDespiteFullDisk(store, () =>
      failUnstarted(
        store,
        job,
        full
          ? full.jobReason
          : `could not start: ${workspaceGoneReason(err, { workspacesDir: workspacesDir(input.stateDir, repo.slug) }) ?? (err as Error).message}`,
      ),
    );
    if (full)
      throw new DiskFullError(
        full.path,
        `Job ${job.id} could not make its workspace: it is recorded failed, and its todo is open again.`,
      );
    throw err;
  }
  const { session, workspacePath, baseRev } = started;
  mark('workspace', { job: job.id });
  try {
    const event = appendEvent(input.stateDir, job.id, 'workspace', {
      path: workspacePath,
      created: started.created ?? false,
      duration_ms: Math.round(performance.now() - t0),
    });
    input.onEvent?.(event);
    // Made by wire in onFolder (a free workspace claimed), else here.
    let wired: JobRunner;
    if (runner && started.keptFolder) {
      made.resolve();
      wired = runner;
    } else if (runner) {
      // Its folder was made again (the reset failed): the agent started in the old one starts again.
      made.reject(new Error('the workspace was made again'));
      await runner.discardEarly();
      runner.startAgentEarly();
      wired = runner;
    } else {
      wired = wire(workspacePath, (await store.todos.get(repo.slug, todo.id)) ?? todo);
      wired.startAgentEarly();
    }
    await store.jobs.setSession(job.id, session.id, workspacePath, baseRev);
    // Where `ii job land` goes by default: the branch the base commit was
    // taken from, in the same lookup, so the two always agree.
    await store.jobs.setBaseBranch(job.id, base.branch);
    const launched = (await store.jobs.get(job.id)) ?? job;
    mark('launch_recorded', { job: job.id });
    mark('launched', { job: job.id });
    return {
      job: launched,
      runner: wired,
      session,
      workspacePath,
      baseRev,
      baseRef: base.ref,
      changeId,
      endedStale,
    };
  } catch (err) {
    // An agent started early for a job that never ran: closed, its transcript removed.
    await runner?.discardEarly();
    const full = asDiskFull(err, workspacePath);
    await recordDespiteFullDisk(store, () =>
      store.jobs.finish(
        job.id,
        'failed',
        full
          ? full.jobReason
          : `could not start: ${workspaceGoneReason(err, { workspace: workspacePath }) ?? (err as Error).message}`,
      ),
    );
    await deps.finishSession(store, session.id, 'failed').catch(() => {});
    throw full ?? err;
  }
}

/** What newJobRunner takes beside the collaborators: the job, its session, and the runner's own options. */
export type NewJobRunnerInput = Omit<
  JobRunnerOptions,
  'vcs' | 'startAgent' | 'finishSession' | 'afterImplement'
> & {
  /** The job's session, released through deps.finishSession when the job ends. */
  sessionId: string;
};

/**
 * The one place a JobRunner is wired to a job's collaborators (a launch and a
 * landing's conflict resolution both start one): every agent is told which
 * job and todo it works for, so a wrapper script or hook can key on them and
 * the scripted agent picks its scenario by todo.
 */
export function newJobRunner(deps: JobDeps, input: NewJobRunnerInput): JobRunner {
  const { sessionId, agent, store, ...rest } = input;
  return new JobRunner({
    ...rest,
    store,
    vcs: deps.vcs,
    startAgent: deps.startAgent,
    agent: { ...agent, env: { ...agent.env, II_JOB_ID: input.jobId, II_TODO_ID: input.todo.id } },
    finishSession: async (outcome) => {
      await deps.finishSession(store, sessionId, outcome);
    },
    ...(deps.afterImplement ? { afterImplement: deps.afterImplement } : {}),
  });
}

/** A claimed job whose workspace could not be made: failed, its todo open again. */
async function failUnstarted(store: AsyncStateStore, job: Job, reason: string): Promise<void> {
  await store.jobs.finish(job.id, 'failed', reason);
  const todo = await store.todos.get(job.repo, job.todo_id);
  // unlessClosed: a close (abandon and close) between the look and the write stays.
  if (todo?.status === 'in_progress')
    await store.todos.setStatus(job.repo, job.todo_id, 'open', { unlessClosed: true });
}
