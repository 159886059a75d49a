// The job loop (README, "Running a job"): implementing → testing → reviewing →
// committing → implementing, until an implement pass changes nothing and the
// project review decides. A plain object with callbacks: the CLI prints its
// events, the dashboard mirrors them, and cancel() stops it from anywhere.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { hostName } from '../proc/host.js';
import { mark } from '../proc/trace.js';
import { endBootLow } from '../proc/priority.js';
import { dirname } from 'node:path';
import type { PermissionPolicy } from '../agent/permission-policy.js';
import type { AgentSession, PromptResult } from '../agent/types.js';
import { asDiskFull, DiskFullError, StoreDamagedError, UserError } from '../errors.js';
import { computeIterationSummary, locateIteration } from '../history/iteration-diff.js';
import { statsToFileChanges, takeSnapshot, type SnapshotFiles } from '../history/snapshot.js';
import { changesMade, currentChange, lastCommit } from '../model/derive.js';
import type { EventData, IterationOutcome, NewJobEvent } from '../model/event.js';
import { addUsage } from '../model/usage.js';
import type {
  AgentPurpose,
  IterationSnapshot,
  Job,
  JobCommit,
  JobReview,
  TestResult,
  Usage,
} from '../model/job.js';
import { appendEvent } from '../state/events.js';
import { eventsFile, transcriptFile } from '../state/paths.js';
import { logMirror } from '../state/log-mirror.js';
import { legacyTemplateWarnings, Prompts, templateVars, type TemplateName } from './prompts.js';
import {
  clearProtocolFile,
  COMMIT_MESSAGE_FILE,
  FEEDBACK_FILE,
  parseFeedback,
  takeProtocolFile,
} from './protocol-files.js';
import { endRecordedGroups, groupRecorder, type GroupRecorder } from '../proc/recorded.js';
import { endJobProcesses, JOB_ENV } from '../proc/job-processes.js';
import { startTicks } from '../proc/group.js';
import { ReadOnlyWrites } from '../proc/sandbox/read-only-hint.js';
import { jobSandbox, type Sandbox } from '../proc/sandbox/sandbox.js';
import { TAIL_LINES } from '../job-log/event-text.js';
import type { FinalStatus, JobRunnerOptions, RunnerStage } from './runner-types.js';
import { recordDespiteFullDisk } from './full-disk.js';
import { waitForPerson } from './ask-wait.js';
import { agentSessionTitle } from './session-title.js';
import { runTests, testFailureTable } from './test-runner.js';
import { workspaceGoneReason } from './workspace-gone.js';
import { OutputTail, setupWorkspace } from './workspace-setup.js';
import { leftoversReason } from './leftovers.js';
import { activityEvent } from './agent-activity.js';
import { redact } from '../text/redact.js';
import { WorkspaceRedirected } from '../vcs/worktree-link.js';
import { newChangeId } from '../vcs/change-id.js';
import { jobRefsRemote } from '../model/remote.js';
import { hasRemoteSync } from '../vcs/remote-config.js';
import { databaseUrl } from '../state/open-async.js';
import { RefPusher } from './ref-pusher.js';

/** The loop was stopped from outside (abandon request, signal, cancel()). */
class Stopped extends Error {
  constructor(
    readonly status: FinalStatus,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** A clear reason the job cannot go on. */
class JobFailure extends Error {}

type End = { end: FinalStatus; reason: string | null };
type Next = RunnerStage | End;
const end = (status: FinalStatus, reason: string | null = null): End => ({ end: status, reason });

interface Turn {
  id: string;
  usage: Usage;
}

/** An agent session started ahead of its turn (see startEarly), not yet on the job's record. */
interface EarlyAgent {
  id: string;
  transcript: string;
  startedAt: string;
  starting: Promise<AgentSession>;
}

/** How long a job that ends before its early agent's turn waits for that agent to close; its process group is ended after. */
const EARLY_CLOSE_MS = 2000;

/**
 * How often a job asks the store for control requests (an abandon, honoured
 * within 2 s): a local read on SQLite, a query to the server on a shared
 * PostgreSQL store, where every runner of every machine asks. At 250 ms the
 * 24 runners of bench/shared-store.bench.js made 9,528 of its 76,186
 * statements, the most of any query but the logs' appends.
 */
const controlPollMs = (store: JobRunnerOptions['store']): number =>
  store.driver === 'postgres' ? 1000 : 250;

/** The test commands, or a UserError saying how to configure them. */
export function requireTestCommands(config: JobRunnerOptions['config']): string[] {
  const cmds = config.job['test-commands'];
  if (cmds.length === 0)
    throw new UserError(
      'no test commands configured: a job needs at least one.\n' +
        'Add them to incrementum.toml, e.g.\n  [job]\n  test-commands = ["npm test"]\n(`ii init` writes a commented config with guessed commands.)',
    );
  return cmds;
}

export class JobRunner {
  private readonly o: JobRunnerOptions;
  private readonly prompts: Prompts;
  private readonly testCommands: string[];
  private readonly abort = new AbortController();
  /** Aborted by cancel() only (abort above also ends every normal run): the ref pusher stops waiting on the remote. */
  private readonly cancelled = new AbortController();
  private stopRequest: Stopped | null = null;
  private current: AgentSession | null = null;
  /** The first implement agent, starting while the baseline tests run, until its turn takes it. */
  private early: EarlyAgent | null = null;
  /** Whether this job said why its [workspace] reuse clones instead of overlaying. */
  private saidFallback = false;
  /** The leftovers check startAgentEarly ran before the agent's start, when no baseline tests run first (prepare takes it). */
  private leftovers: Promise<string[]> | null = null;
  private stage: RunnerStage | null = null;
  /** The id `ii job do` named for the first change, until the first implement pass makes it. */
  private firstChangeId: string | null;
  /** The change this runner started in its workspace (its refs and change file). */
  private startedChange: string | null = null;
  /** HEAD when the current change started: its files are diffed against it. */
  private changeBase: string | null = null;
  /** Implement passes of the current change, still without a commit, that changed nothing. */
  private emptyPasses = 0;
  /** See head(). */
  private knownHead: string | null = null;
  private timers: NodeJS.Timeout[] = [];
  /** The timers' store calls under way (inBackground). */
  private readonly background = new Map<string, Promise<void>>();
  /** Test commands that already failed on the untouched base (--allow-failing-baseline). */
  private baselineFailures: TestResult[] = [];
  private running: Promise<Job> | null = null;
  /** Every process group the job starts is recorded, so a dead runner's can be ended by others. */
  private readonly recordGroup: GroupRecorder;
  /** The first write that found its disk full: the job ends failed with it (see noteDiskFull). */
  private diskFull: DiskFullError | null = null;
  /**
   * The setup's and the tests' environment: it names the job (as the
   * agent's does), so whatever they start is found at the job's end even
   * after it left the workspace and its process group (setsid).
   */
  private readonly childEnv: NodeJS.ProcessEnv;
  /** Every process the job starts (agent, setup, tests) runs inside it; null: unsandboxed. */
  private readonly sandbox: Sandbox | null;
  /** [agent] permissions, and what a person allowed always: for every agent session of the job. */
  private readonly permissions: PermissionPolicy;
  /** Pushes the job's refs to the shared remote as they are made; null: not shared ([remote] push). */
  private readonly pusher: RefPusher | null;

  constructor(opts: JobRunnerOptions) {
    this.o = opts;
    this.recordGroup = groupRecorder(opts.store, opts.jobId, opts.workspacePath);
    this.childEnv = { ...(opts.testEnv ?? process.env), [JOB_ENV]: opts.jobId, II_TODO_ID: opts.todo.id };
    this.testCommands = requireTestCommands(opts.config);
    this.firstChangeId = opts.firstChangeId ?? null;
    const agentConfig = opts.config.agent;
    this.permissions = {
      mode: agentConfig.permissions,
      allowCommands: agentConfig.allow.commands,
      allowKinds: agentConfig.allow.kinds,
      always: [],
    };
    this.sandbox =
      opts.sandbox !== undefined
        ? opts.sandbox
        : jobSandbox({
            config: opts.config,
            repoRoot: opts.repoRoot,
            workspace: opts.workspacePath,
            stateDir: opts.stateDir,
            agent: opts.agent,
          });
    const remote =
      opts.refsRemote !== undefined
        ? opts.refsRemote
        : jobRefsRemote(opts.config, databaseUrl() !== null, hasRemoteSync(opts.repoRoot));
    this.pusher = remote
      ? new RefPusher(
          opts.vcs,
          opts.repoRoot,
          remote,
          (type, message) => (type === 'info' ? this.event({ type, message }) : this.warn(message)),
          // Recorded for the job: a runner killed outright leaves its push to the dead-runner cleanup.
          { signal: this.cancelled.signal, record: { recorder: this.recordGroup, label: 'git push' } },
        )
      : null;
    // Parse every template now: a broken override fails before any agent runs.
    this.prompts = new Prompts(opts.repoRoot).loadAll();
  }

  get jobId(): string {
    return this.o.jobId;
  }

  /**
   * Runs the job to a terminal state and returns the final record. Never
   * rejects for a job failure; rejects with StoreDamagedError when the store
   * is found damaged (nothing more can be recorded).
   */
  run(): Promise<Job> {
    this.running ??= this.runOnce();
    return this.running;
  }

  /**
   * Stops the job from any stage: cancels the agent, kills the test process
   * groups; run() then resolves with the job marked `status` (failed unless
   * said otherwise). Safe to call more than once: the first call wins.
   */
  cancel(opts: { status?: 'failed' | 'abandoned'; reason?: string } = {}): void {
    if (this.stopRequest) return;
    const status = opts.status ?? 'failed';
    this.stopRequest = new Stopped(
      status,
      opts.reason ?? (status === 'abandoned' ? 'abandoned' : 'cancelled'),
    );
    this.abort.abort();
    this.cancelled.abort();
    void this.current?.cancel().catch(() => {});
  }

  // ─── lifecycle ──────────────────────────────────────────────────────────

  private async runOnce(): Promise<Job> {
    const { store, jobId } = this.o;
    mark('run_start', { job: jobId });
    await this.beat();
    this.timers.push(
      setInterval(() => this.inBackground('beat', () => this.beat()), this.o.heartbeatMs ?? 5000),
    );
    this.timers.push(
      setInterval(
        () => this.inBackground('poll', () => this.pollControl()),
        this.o.pollMs ?? controlPollMs(store),
      ),
    );
    for (const t of this.timers) t.unref();
    for (const w of legacyTemplateWarnings(this.o.repoRoot)) this.warn(w);
    let outcome: End;
    try {
      outcome = await this.loop();
      // The disk filled as the loop ended (its last event): failed all the same.
      if (this.diskFull) outcome = end('failed', this.diskFull.jobReason);
    } catch (err) {
      if (err instanceof StoreDamagedError) {
        // The store takes no more writes: no failure to record, no workspace
        // to release in it. The agent was closed on the way out of its turn;
        // the test process groups go now.
        await this.stopTimers();
        this.abort.abort();
        await this.endStrays();
        await this.pusher?.settle();
        throw err;
      }
      // A git command that found no space names no file: the workspace is where it ran.
      const full =
        this.diskFull ?? (err instanceof JobFailure ? null : asDiskFull(err, this.o.workspacePath));
      if (full) outcome = end('failed', full.jobReason);
      else if (err instanceof Stopped || this.stopRequest) {
        const s = this.stopRequest ?? (err as Stopped);
        outcome = end(s.status, s.reason);
      } else {
        const msg = err instanceof Error ? err.message : String(err);
        const gone = workspaceGoneReason(err, { workspace: this.o.workspacePath });
        outcome = end(
          'failed',
          gone ?? (err instanceof JobFailure || err instanceof UserError ? msg : `error: ${msg}`),
        );
      }
    }
    mark('loop_done', { job: jobId });
    await this.stopTimers();
    this.abort.abort(); // whatever test process group is left goes now
    await this.closeEarly(); // a job that ended before its first turn
    // The last push lands before the end is recorded: a job seen finished elsewhere has its commits on the remote.
    // Before the recorded groups are ended below: the push in flight is one of them.
    await this.pusher?.settle();
    // Anything still recorded (a group that outlived its stop) goes before
    // the workspace is released: the next job must not share it.
    await endRecordedGroups(store, { job_id: jobId }).catch(() => {});
    // And what left its group (setsid) but works in the workspace or names the job.
    await this.endStrays();
    let job: Job;
    try {
      job = await recordDespiteFullDisk(store, () => store.jobs.finish(jobId, outcome.end, outcome.reason));
    } catch (err) {
      throw unrecorded(err, jobId, outcome);
    }
    mark('job_end', { job: jobId });
    try {
      this.o.onEndRecorded?.();
    } catch {}
    await this.closeIteration(job, 'job_ended', true).catch((e: unknown) =>
      this.warn(`could not snapshot the last iteration: ${String(e)}`),
    );
    this.event({ type: 'finished', status: outcome.end, reason: outcome.reason });
    try {
      await this.o.finishSession?.(outcome.end === 'completed' ? 'done' : 'failed');
    } catch (err) {
      this.warn(`could not release the workspace: ${(err as Error).message}`);
    }
    mark('session_finished', { job: jobId });
    job = (await store.jobs.get(jobId)) ?? job;
    try {
      await this.o.onFinished?.(job);
    } catch (err) {
      this.warn(`the finish hook failed: ${(err as Error).message}`);
    }
    mark('journal_done', { job: jobId });
    return job;
  }

  /** Ends the processes the job left outside its recorded groups, saying so (a warning: the agent or a test leaked them). */
  private async endStrays(): Promise<void> {
    try {
      const r = await endJobProcesses({ jobIds: [this.o.jobId], dirs: [this.o.workspacePath] });
      if (r.ended.length > 0)
        this.warn(
          `ended ${r.ended.length} process${r.ended.length === 1 ? '' : 'es'} the job left running outside its process groups (pid ${r.ended.join(', ')})`,
        );
      if (r.left.length > 0)
        this.warn(
          `process${r.left.length === 1 ? '' : 'es'} ${r.left.join(', ')} would not end; the workspace is not handed to another job while they run`,
        );
    } catch {} // /proc unreadable: the recorded groups were all there is
  }

  private async loop(): Promise<End> {
    await this.prepare();
    let next: Next = 'implementing';
    for (;;) {
      if (typeof next !== 'string') return next;
      this.checkStopped();
      if (next === 'implementing') next = await this.implement();
      else if (next === 'testing') next = await this.test();
      else if (next === 'reviewing') next = await this.review();
      else if (next === 'committing') next = await this.commit();
      else next = await this.projectReview();
    }
  }

  /**
   * Runs a timer's store call (`run` never rejects) unless its last one is
   * still under way: on a store that answers over the network a call can
   * outlast the interval.
   */
  private inBackground(kind: string, run: () => Promise<void>): void {
    if (this.background.has(kind)) return;
    this.background.set(
      kind,
      run().finally(() => this.background.delete(kind)),
    );
  }

  /** Stops the heartbeat and the control poll, and waits for the ones under way (none outlives the job's end). */
  private async stopTimers(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await Promise.all(this.background.values());
  }

  private async beat(): Promise<void> {
    try {
      await this.o.store.jobs.heartbeat(this.o.jobId, process.pid, hostName(), OWN_START);
    } catch {}
  }

  private async pollControl(): Promise<void> {
    if (this.stopRequest) return;
    try {
      for (const r of await this.o.store.control.pending(this.o.jobId)) {
        if (r.kind !== 'abandon') continue;
        await this.o.store.control.markHandled(r.id);
        this.cancel({ status: 'abandoned', reason: r.reason || 'abandoned on request' });
      }
    } catch {} // a busy database: the next poll tries again
  }

  // ─── before the first prompt ────────────────────────────────────────────

  /**
   * A workspace that can run the tests, and tests that pass on the untouched
   * base: a broken environment fails here, in seconds, before any agent turn.
   */
  private async prepare(): Promise<void> {
    const failed = await this.setup();
    mark('setup_done', { job: this.o.jobId });
    if (failed)
      throw new JobFailure(
        `the workspace setup failed: \`${failed.result.command}\` exited ${failed.result.exit_code}` +
          (failed.tail ? `:\n${failed.tail}\n` : '\n') +
          'Fix [workspace] setup in incrementum.toml; `ii doctor --tests` runs it in a scratch workspace.',
      );
    if (this.o.config.job['baseline-tests'] && !this.o.resolving) {
      this.startEarly();
      await this.baseline();
      mark('baseline_done', { job: this.o.jobId });
    }
    // A landing's resolver starts mid-rebase, its conflicts uncommitted on purpose.
    if (this.o.resolving) return;
    const left = await (this.leftovers ?? this.o.vcs.uncommittedPaths(this.o.workspacePath));
    mark('leftovers_checked', { job: this.o.jobId });
    this.checkStopped();
    if (left.length) throw new JobFailure(leftoversReason(left));
  }

  /** [workspace] setup when the workspace needs it; the failing command and its output's tail, if one fails. */
  private async setup(): Promise<{ result: TestResult; tail: string } | null> {
    const { config, workspacePath: ws, repoRoot } = this.o;
    const tail = new OutputTail();
    const r = await setupWorkspace({
      workspace: ws,
      checkout: repoRoot,
      commands: config.workspace.setup,
      reuse: config.workspace.reuse,
      env: this.childEnv,
      signal: this.abort.signal,
      timeoutMs: config.job['test-timeout-seconds'] * 1000,
      recordGroup: this.recordGroup,
      sandbox: this.sandbox,
      onStart: (command) => {
        tail.reset();
        this.event({ type: 'setup_start', command });
      },
      onOutput: (_command, stream, text) => {
        tail.add(text);
        this.event({ type: 'output', source: 'setup', stream, text });
      },
      onEnd: (result) => this.event({ type: 'setup_end', ...result, tail: tail.lines(TAIL_LINES) }),
      onReuse: (u) => this.event({ type: 'setup_reused', ...u }),
      onNoReuse: (command, reason) =>
        this.event({ type: 'info', message: `setup: running \`${command}\` (no reuse: ${reason})` }),
      // Said once a job (a runner may run several: cli/job/do.ts standby).
      onOverlayFallback: (message) => {
        if (this.saidFallback) return;
        this.saidFallback = true;
        this.event({ type: 'info', message });
      },
    });
    this.checkStopped();
    if (r.kind === 'aborted') throw this.stopRequest ?? new JobFailure('the workspace setup was interrupted');
    if (r.kind !== 'failed') return null;
    return { result: r.failed, tail: redact(r.tail) };
  }

  /**
   * Starts the first implement agent as the baseline tests start, so its
   * start (its process, in the sandbox, and ACP's initialize and
   * session/new: 100 to 450 ms for the scripted agent, seconds for some
   * real ones) overlaps theirs instead of following it. The setup is done
   * (an overlay it mounted is in the agent's sandbox too), and the agent is
   * told nothing before its prompt. It goes on the job's record (its
   * session, agent_start) only when its turn comes: a job that ends before
   * (failing tests on the base, leftovers, a stop) closes it unrecorded.
   */
  private startEarly(after?: Promise<string[]>, made?: Promise<unknown>): void {
    if (this.early) return;
    const id = randomBytes(6).toString('hex');
    const transcript = transcriptFile(this.o.stateDir, this.o.jobId, id);
    mkdirSync(dirname(transcript), { recursive: true, mode: 0o700 });
    mark('agent_spawn', { job: this.o.jobId });
    // While the agent starts: the git processes the first change goes through.
    (made ?? Promise.resolve()).then(() => this.o.vcs.warm?.(this.o.workspacePath)).catch(() => {}); // met again, and said, at first use
    // After the leftovers check, if given: what the agent writes as it starts is its own.
    const starting = after
      ? after.then((left) => {
          if (left.length) throw new JobFailure(leftoversReason(left)); // met in prepare, before its turn
          return this.launchAgent('implement', id, transcript);
        })
      : this.launchAgent('implement', id, transcript, made);
    starting.then(() => mark('agent_ready', { job: this.o.jobId })).catch(() => {}); // a failed start is met, and said, at its turn
    this.early = { id, transcript, startedAt: new Date().toISOString(), starting };
  }

  /**
   * Starts the first implement agent as the workspace is made, before the
   * runner runs (see startEarly), when nothing runs in the workspace before
   * its turn but the tests: no [workspace] setup, which may change what it
   * must see (an overlay it mounts), and no landing's resolver. With `made`
   * (a free workspace's folder, kept, still being reset: launch.ts) the
   * agent's process and ACP's initialize go ahead of it, and session/new
   * waits for it.
   */
  startAgentEarly(made?: Promise<unknown>): void {
    if (this.o.resolving || this.o.config.workspace.setup.length > 0 || this.stopRequest) return;
    if (this.o.config.job['baseline-tests']) return this.startEarly(undefined, made);
    // No baseline tests: the leftovers check (prepare's) comes first, so files
    // the agent writes at its start are not blamed on the job before; it
    // looks at the workspace once it is made.
    this.leftovers = (made ?? Promise.resolve()).then(() =>
      this.o.vcs.uncommittedPaths(this.o.workspacePath),
    );
    this.leftovers.catch(() => {}); // met, and said, in prepare
    this.startEarly(this.leftovers);
  }

  /** The agent startAgentEarly started, for a job that will not run: closed, unrecorded. */
  async discardEarly(): Promise<void> {
    this.leftovers = null; // looked at before it, if at all
    if (!this.early) return;
    await this.closeEarly();
    // An agent still starting after EARLY_CLOSE_MS is not closed above, and
    // no run ends its group after: it goes here, with anything it started.
    await endRecordedGroups(this.o.store, { job_id: this.o.jobId }).catch(() => {});
  }

  /** The early agent of a job that ended before its turn: closed (its group is ended after, in any case), its transcript removed. */
  private async closeEarly(): Promise<void> {
    const e = this.early;
    if (!e) return;
    this.early = null;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      e.starting.then(
        (s) => s.close(),
        () => {},
      ),
      new Promise((r) => (timer = setTimeout(r, EARLY_CLOSE_MS))),
    ]).catch(() => {});
    clearTimeout(timer);
    try {
      rmSync(e.transcript, { force: true });
    } catch {}
  }

  private async baseline(): Promise<void> {
    const tails = new Map<string, OutputTail>();
    const readOnly = new ReadOnlyWrites();
    const run = await runTests({
      commands: this.testCommands,
      cwd: this.o.workspacePath,
      env: this.childEnv,
      signal: this.abort.signal,
      timeoutMs: this.o.config.job['test-timeout-seconds'] * 1000,
      recordGroup: this.recordGroup,
      sandbox: this.sandbox,
      onStart: (command) => {
        tails.set(command, new OutputTail());
        this.event({ type: 'test_start', command, baseline: true });
      },
      onOutput: (command, stream, text) => {
        tails.get(command)?.add(text);
        if (this.sandbox) readOnly.add(text);
        this.event({ type: 'test_output', command, stream, text, baseline: true });
      },
      onEnd: (result) =>
        this.event({
          type: 'test_end',
          ...result,
          baseline: true,
          tail: tails.get(result.command)?.lines(TAIL_LINES) ?? '',
        }),
    });
    this.checkStopped();
    this.event({ type: 'baseline', passed: run.passed, results: run.results });
    if (run.passed) return;
    const failing = run.results.filter((r) => r.exit_code !== 0);
    if (this.o.allowFailingBaseline) {
      this.baselineFailures = failing;
      this.warn(
        `the tests fail before any change (${failing.map((f) => `\`${f.command}\``).join(', ')}); going on (--allow-failing-baseline)`,
      );
      return;
    }
    const first = failing[0]!;
    const tail = redact(tails.get(first.command)?.lines() ?? '');
    throw new JobFailure(
      `the tests fail before any change: ${failing.map((f) => `\`${f.command}\` exited ${f.exit_code}`).join(', ')}` +
        (tail ? `\n${tail}\n` : '\n') +
        `No agent turn was spent. Fix the tests (or [workspace] setup) on ${this.o.baseRev.slice(0, 10)}, ` +
        'or run the job with --allow-failing-baseline to go on anyway.' +
        (readOnly.hint() ? `\n${readOnly.hint()}` : ''),
    );
  }

  // ─── stages ─────────────────────────────────────────────────────────────

  private async implement(): Promise<Next> {
    const { store, jobId, vcs, workspacePath: ws, config } = this.o;
    await this.enter('implementing');
    mark('implementing', { job: jobId });
    const entered = await this.enterChange(await this.job());
    const change = entered.change;
    mark('change_started', { job: jobId });
    let job = entered.job;
    const number = job.changes.length;
    const maxIter = config.job['max-iterations'];
    // The first empty pass answered no request: each after it answered the
    // project review's, and max-iterations of them are allowed.
    const unanswered = this.emptyPasses;
    if (change.commits.length === 0 && unanswered > maxIter)
      throw new JobFailure(
        `the project review requested changes ${unanswered} time${unanswered === 1 ? '' : 's'}, but no implement pass after it changed anything ([job] max-iterations = ${maxIter}); ` +
          'raise the cap in incrementum.toml or split the todo.',
      );
    if (change.commits.length >= maxIter)
      throw new JobFailure(
        `change ${number} (${change.change_id}) was not accepted after ${maxIter} iterations ([job] max-iterations = ${maxIter}); ` +
          'raise the cap in incrementum.toml or split the todo.',
      );
    const hasWork = change.commits.length > 0;
    this.clearFiles();
    const headBefore = await this.head();
    const before = takeSnapshot(job, hasWork ? await this.changeFiles(headBefore) : []);
    const feedback = job.feedback;
    const prompt = await this.render(this.o.resolving ? 'resolve-conflicts' : 'implement', {
      Feedback: feedback ?? '',
    });
    mark('rendered', { job: jobId });
    const turn = await this.agentTurn('implement', prompt, async (session, result) => {
      if (!job.auto_commit || !this.o.afterImplement || !(await vcs.hasChanges(ws))) return;
      try {
        const r = await this.o.afterImplement({
          session,
          workspace: ws,
          todo: this.o.todo,
          files: session.files(),
          summary: result.text,
        });
        if (r?.warning) this.warn(r.warning);
      } catch (err) {
        this.warn(`auto-commit failed: ${(err as Error).message}`);
      }
    });
    job = await this.job();
    // Staged once: the answer, and the tree commitIteration records below.
    const staged = await vcs.stageWorkingCopy(ws);
    this.knownHead = staged.head;
    const changed = staged.changed || staged.head !== headBefore;
    if (!changed && !hasWork) {
      // Nothing to do (the spec): the change stays on the record, with no
      // commit, and the project review decides.
      clearProtocolFile(ws, this.o.repoRoot, COMMIT_MESSAGE_FILE);
      this.emptyPasses++;
      return 'project-review';
    }
    // A pass that changed nothing in a change that holds rejected work (its
    // review asked for changes, or its tests failed) does not go to the
    // project review, which could accept work a review just rejected: the
    // change is tested and reviewed again as it stands (README, "An
    // implement pass that changes nothing").
    if (!changed)
      this.warn(
        `the implement pass changed nothing in change ${number}, which holds rejected work: it is tested and reviewed again as it stands`,
      );
    const draft =
      takeProtocolFile(ws, this.o.repoRoot, COMMIT_MESSAGE_FILE)?.trim() ||
      change.commits.at(-1)?.draft_message ||
      this.defaultMessage();
    if (!hasWork) {
      const maxChanges = config.job['max-changes'];
      const made = changesMade(job);
      if (made >= maxChanges)
        throw new JobFailure(
          `the agent started change ${made + 1}, but the job may make only ${maxChanges} ([job] max-changes = ${maxChanges}); ` +
            'raise the cap in incrementum.toml or split the todo.',
        );
    }
    const ic = await vcs.commitIteration(ws, draft, staged);
    this.knownHead = ic.commit_id;
    const files = statsToFileChanges(ic.files, ws);
    const commit = await store.jobs.appendCommit(jobId, {
      commit_id: ic.commit_id,
      draft_message: draft,
      agent_session_id: turn.id,
      files,
      usage: turn.usage,
      feedback,
      before,
    });
    await store.jobs.setFeedback(jobId, null);
    this.pusher?.push(ic.change_id);
    // The job as read after the turn, with the commit just added to its last change (no read again).
    this.event({
      type: 'iteration:started',
      change_id: ic.change_id,
      change_number: job.changes.length,
      iteration: (job.changes.at(-1)?.commits.length ?? 0) + 1,
      commit_id: commit.commit_id,
      files,
    });
    return 'testing';
  }

  /**
   * The change this pass works in (the spec: on entering implementing, the
   * current change, or a new one). A new change is recorded before its refs
   * are made, so `ii workspace prune`, which lists the refs before it reads
   * the records, never takes a change being started for nobody's. A change
   * with no commit left on the record by an earlier run (a job resolving its
   * landing's conflicts) is started again in this workspace.
   */
  private async enterChange(job: Job): Promise<{ job: Job; change: Job['changes'][number] }> {
    const { store, jobId, vcs, workspacePath: ws } = this.o;
    let change = currentChange(job);
    // The job as read: nothing was written since.
    if (change && change.change_id === this.startedChange) return { job, change };
    if (change && change.commits.length > 0) change = null; // not this runner's to go on with
    const id = change?.change_id ?? this.firstChangeId ?? newChangeId();
    this.firstChangeId = null;
    if (!change) await store.jobs.appendChange(jobId, id);
    this.changeBase = await this.head();
    await vcs.startChange(ws, id, this.changeBase);
    this.startedChange = id;
    this.emptyPasses = 0;
    const now = await this.job();
    this.event({ type: 'change_started', change_id: id, number: now.changes.length });
    return { job: now, change: now.changes.at(-1)! };
  }

  private async test(): Promise<Next> {
    const { store, jobId, workspacePath: ws } = this.o;
    await this.enter('testing');
    this.knownHead = null; // so may a test command
    // An agent that changed a lockfile needs its dependencies installed
    // before the tests mean anything. A failing install fails this
    // iteration's tests: the agent's change broke it, so the agent is told.
    const setupFailed = await this.setup();
    if (setupFailed) {
      const result = { ...setupFailed.result, command: `[workspace] setup: ${setupFailed.result.command}` };
      await store.jobs.updateCurrentCommit(jobId, { tests_passed: false, test_results: [result] });
      this.event({ type: 'tests', passed: false, results: [result] });
      await store.jobs.setFeedback(
        jobId,
        testFailureTable([result]) + `\n\nIts output ended with:\n\n\`\`\`\n${setupFailed.tail}\n\`\`\``,
      );
      await this.closeIteration(await this.job(), 'tests_failed');
      return 'implementing';
    }
    // The end of each command's output, so its end event shows why it failed
    // to a reader that does not replay every chunk (another process's pane).
    let tail = '';
    const run = await runTests({
      commands: this.testCommands,
      cwd: ws,
      env: this.childEnv,
      signal: this.abort.signal,
      timeoutMs: this.o.config.job['test-timeout-seconds'] * 1000,
      recordGroup: this.recordGroup,
      sandbox: this.sandbox,
      onStart: (command) => {
        tail = '';
        this.event({ type: 'test_start', command });
      },
      onOutput: (command, stream, text) => {
        tail = (tail + text).slice(-TAIL_CHARS);
        this.event({ type: 'test_output', command, stream, text });
      },
      onEnd: (result) => {
        this.event({ type: 'test_end', ...result, tail: lastLines(tail, TAIL_LINES) });
      },
    });
    this.checkStopped();
    // A command that already failed on the base (--allow-failing-baseline)
    // does not count against the change; the review is told about it.
    const known = new Set(this.baselineFailures.map((r) => r.command));
    const passed = !run.aborted && run.results.every((r) => r.exit_code === 0 || known.has(r.command));
    await store.jobs.updateCurrentCommit(jobId, { tests_passed: passed, test_results: run.results });
    this.event({ type: 'tests', passed, results: run.results });
    if (passed) return 'reviewing';
    await store.jobs.setFeedback(jobId, testFailureTable(run.results));
    await this.closeIteration(await this.job(), 'tests_failed');
    return 'implementing';
  }

  private async review(): Promise<Next> {
    const { store, jobId } = this.o;
    await this.enter('reviewing');
    const review = await this.verdict('review');
    const usage = addUsage(lastCommit(await this.job())?.usage ?? review.usage, review.usage);
    if (!review.ok) throw new JobFailure(`invalid feedback from the review: ${review.reason}`);
    await store.jobs.updateCurrentCommit(jobId, { review: review.review, usage });
    this.event({ type: 'review', project: false, review: review.review });
    const { outcome, comments } = review.review;
    if (outcome === 'ACCEPT') return 'committing';
    if (outcome === 'ABANDON') return end('abandoned', `the review abandoned the todo${firstLine(comments)}`);
    await store.jobs.setFeedback(jobId, comments || 'The reviewer requested changes but gave no details.');
    await this.closeIteration(await this.job(), 'changes_requested');
    return 'implementing';
  }

  private async commit(): Promise<Next> {
    const { store, jobId, vcs, workspacePath: ws, repoRoot } = this.o;
    await this.enter('committing');
    clearProtocolFile(ws, repoRoot, COMMIT_MESSAGE_FILE);
    const turn = await this.agentTurn('commit-message', await this.render('commit-message', {}));
    const cur = lastCommit(await this.job());
    const agentMessage =
      takeProtocolFile(ws, repoRoot, COMMIT_MESSAGE_FILE)?.trim() ||
      cur?.draft_message ||
      this.defaultMessage();
    const message = (await this.render('commit', { Message: agentMessage })).trim() + '\n';
    const sha = (this.knownHead = await vcs.describe(ws, message));
    // Describing rewrites the iteration's commit: the job keeps the final id
    // (the one a user merges) and the iteration's own id beside it.
    await store.jobs.updateCurrentCommit(jobId, {
      usage: cur ? addUsage(cur.usage, turn.usage) : turn.usage,
      ...(cur && cur.commit_id !== sha
        ? { commit_id: sha, iteration_commit_id: cur.iteration_commit_id ?? cur.commit_id }
        : {}),
    });
    const job = await this.job();
    const changeId = job.changes.at(-1)?.change_id ?? '';
    if (changeId) this.pusher?.push(changeId);
    this.event({ type: 'committed', change_id: changeId, commit_id: sha, message });
    await this.closeIteration(job, 'committed');
    return 'implementing';
  }

  private async projectReview(): Promise<Next> {
    const { store, jobId, config } = this.o;
    await this.enter('project-review');
    const review = await this.verdict('project-review');
    if (!review.ok) throw new JobFailure(`invalid feedback from the project review: ${review.reason}`);
    await store.jobs.setProjectReview(jobId, review.review);
    this.event({ type: 'review', project: true, review: review.review });
    const { outcome, comments } = review.review;
    if (outcome === 'ACCEPT') return end('completed');
    if (outcome === 'ABANDON')
      return end('abandoned', `the project review abandoned the todo${firstLine(comments)}`);
    const made = changesMade(await this.job());
    const maxChanges = config.job['max-changes'];
    if (made >= maxChanges)
      throw new JobFailure(
        `the project review requested more changes, but the job already made ${made} ([job] max-changes = ${maxChanges}); ` +
          'raise the cap in incrementum.toml or split the todo.',
      );
    await store.jobs.setFeedback(
      jobId,
      comments || 'The project review requested changes but gave no details.',
    );
    // The next pass works in the change the empty pass left on the record.
    return 'implementing';
  }

  // ─── helpers ────────────────────────────────────────────────────────────

  /** Runs a review-like prompt and reads the verdict the agent left in .incrementum-feedback. */
  private async verdict(
    purpose: 'review' | 'project-review',
  ): Promise<{ ok: true; review: JobReview; usage: Usage } | { ok: false; reason: string; usage: Usage }> {
    const { workspacePath: ws, repoRoot } = this.o;
    clearProtocolFile(ws, repoRoot, FEEDBACK_FILE);
    const turn = await this.agentTurn(purpose, await this.render(purpose, {}));
    const parsed = parseFeedback(takeProtocolFile(ws, repoRoot, FEEDBACK_FILE));
    if (!parsed.ok) return { ok: false, reason: parsed.reason, usage: turn.usage };
    return {
      ok: true,
      usage: turn.usage,
      review: {
        outcome: parsed.outcome,
        comments: parsed.details,
        agent_session_id: turn.id,
        reviewed_at: new Date().toISOString(),
      },
    };
  }

  /**
   * One agent session for one prompt: start it, record it on the job, send
   * the prompt, run `after` in the same session, close it. A stop request
   * interrupts any await here; the session is always closed.
   */
  private async agentTurn(
    purpose: AgentPurpose,
    prompt: string,
    after?: (s: AgentSession, r: PromptResult) => Promise<void>,
  ): Promise<Turn> {
    this.checkStopped();
    this.knownHead = null; // the agent may commit
    const { store, jobId, stateDir, agent } = this.o;
    // The first implement turn takes the agent started during the baseline tests.
    const early = purpose === 'implement' ? this.early : null;
    this.early = null;
    const id = early?.id ?? randomBytes(6).toString('hex');
    const transcript = early?.transcript ?? transcriptFile(stateDir, jobId, id);
    if (!early) mkdirSync(dirname(transcript), { recursive: true, mode: 0o700 });
    await store.jobs.addAgentSession(jobId, {
      purpose,
      id,
      transcript,
      started_at: early?.startedAt ?? new Date().toISOString(),
    });
    this.event({ type: 'agent_start', purpose, agent_session_id: id });
    const starting = early?.starting ?? this.launchAgent(purpose, id, transcript);
    let session: AgentSession;
    try {
      session = await this.interruptible(starting);
    } catch (err) {
      // If the stop won the race, the session may still come up: close it then.
      starting.then(
        (s) => s.close(),
        () => {},
      );
      if (this.stopRequest) throw this.stopRequest;
      const full = asDiskFull(err, transcript);
      if (full) throw full;
      throw new JobFailure(`could not start the ${purpose} agent (${agent.name}): ${(err as Error).message}`);
    }
    this.current = session;
    try {
      mark('prompt', { job: jobId, purpose });
      endBootLow(); // a cold runner's start at the floor ends here (proc/priority.ts bootLow)
      const result = await this.interruptible(session.prompt(prompt));
      if (result.stopReason === 'cancelled') throw new Error('its turn was cancelled');
      if (result.stopReason !== 'end_turn') this.warn(`the ${purpose} agent stopped: ${result.stopReason}`);
      if (after) await this.interruptible(after(session, result));
      return { id, usage: session.usage() };
    } catch (err) {
      if (this.stopRequest) throw this.stopRequest;
      // Not the agent's failure to report: its workspace can no longer be used (runOnce says why).
      if (err instanceof WorkspaceRedirected) throw err;
      // An agent that died writing into a full workspace: its error says so.
      const full = asDiskFull(err, this.o.workspacePath);
      if (full) throw full;
      throw new JobFailure(`the ${purpose} agent failed: ${(err as Error).message}`);
    } finally {
      this.current = null;
      await session.close().catch((e: unknown) => this.warn(`closing the ${purpose} agent: ${String(e)}`));
      // What the session cost counts whether or not its turn succeeded: the
      // session's own record (the journal's usage per stage) and the job's total.
      try {
        await store.jobs.recordAgentUsage(jobId, id, session.usage());
      } catch (e) {
        const full = asDiskFull(e);
        if (full) this.noteDiskFull(full);
        else this.warn(`could not record the ${purpose} agent's usage: ${String(e)}`);
      }
    }
  }

  /** Starts an agent session of the job (not yet recorded on it: agentTurn does). */
  private launchAgent(
    purpose: AgentPurpose,
    id: string,
    transcript: string,
    beforeSession?: Promise<unknown>,
  ): Promise<AgentSession> {
    const { store, jobId, agent, config } = this.o;
    const maxBytes = Math.floor(config.agent['transcript-max-mb'] * 2 ** 20);
    return this.o.startAgent({
      ...(beforeSession ? { beforeSession } : {}),
      agent,
      cwd: this.o.workspacePath,
      transcriptPath: transcript,
      transcriptMaxBytes: maxBytes,
      transcriptSink: logMirror()?.transcript(jobId, id, maxBytes),
      turnTimeoutMs: config.agent['turn-timeout-seconds'] * 1000,
      recordGroup: this.recordGroup,
      title: agentSessionTitle(jobId, purpose, this.o.todo.title),
      sandbox: this.sandbox,
      permissions: this.permissions,
      askPerson: (ask, signal) =>
        waitForPerson({
          store,
          jobId,
          ask,
          timeoutMs: config.agent['ask-timeout'],
          signal,
          stopped: this.abort.signal,
          event: (e) => this.event(e),
        }),
      onFileChange: (file) => this.event({ type: 'file_change', ...file }),
      onActivity: (a) => {
        const e = activityEvent(a, id);
        if (e) this.event(e);
      },
      onWriteError: (err, path) => {
        const full = asDiskFull(err, path);
        if (full) this.noteDiskFull(full);
      },
    });
  }

  /** Resolves like `p`, or rejects as soon as the job is stopped. */
  private interruptible<T>(p: Promise<T>): Promise<T> {
    if (this.stopRequest) return Promise.reject(this.stopRequest);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.stopRequest ?? new Error('stopped'));
      this.abort.signal.addEventListener('abort', onAbort, { once: true });
      p.then(
        (v) => {
          this.abort.signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e: unknown) => {
          this.abort.signal.removeEventListener('abort', onAbort);
          reject(e as Error);
        },
      );
    });
  }

  private checkStopped(): void {
    if (this.stopRequest) throw this.stopRequest;
  }

  private async enter(to: RunnerStage): Promise<void> {
    this.checkStopped();
    const from = this.stage;
    if (from === to) return;
    this.stage = to;
    const stored = to === 'project-review' ? 'reviewing' : to;
    await this.o.store.jobs.setStage(this.o.jobId, stored);
    this.event({ type: 'stage', from, to });
  }

  /**
   * Sets the current commit's after-snapshot and logs the iteration's end
   * (on finish: only if the iteration was left open).
   */
  private async closeIteration(job: Job, outcome: IterationOutcome, onlyIfOpen = false): Promise<void> {
    // The last commit of the last change, accepted or not: the commit stage
    // closes an iteration whose change is already complete.
    const change = job.changes.at(-1);
    const cur = lastCommit(job);
    if (!change || !cur || (onlyIfOpen && cur.after)) return;
    const files = await this.changeFiles(await this.head());
    const after = takeSnapshot(job, files);
    // The diff summary is stored with the after-snapshot, as the iteration
    // ends (the iteration-history spec's completeIteration): ii job diff
    // and the board read it, and compute one only for older records.
    const diff_summary = await this.iterationSummary(job, cur, after).catch((e: unknown) => {
      this.warn(`could not summarise the iteration's diff: ${String(e)}`);
      return null;
    });
    await this.o.store.jobs.updateCurrentCommit(this.o.jobId, { after, diff_summary });
    this.event({
      type: 'iteration:completed',
      change_id: change.change_id,
      change_number: job.changes.length,
      iteration: change.commits.length,
      commit_id: cur.commit_id,
      outcome,
    });
  }

  /** The summary of iteration `cur` against the one before it, with its after-snapshot `after`. */
  private async iterationSummary(job: Job, cur: JobCommit, after: IterationSnapshot): Promise<string> {
    const change = job.changes.findIndex((ch) => ch.commits.includes(cur));
    if (change < 0) throw new Error(`iteration ${cur.id} is not in job ${job.id}'s record`);
    const iteration = job.changes[change]!.commits.indexOf(cur);
    const ended: Job = {
      ...job,
      changes: job.changes.map((ch, i) =>
        i === change
          ? { ...ch, commits: ch.commits.map((c, k) => (k === iteration ? { ...c, after } : c)) }
          : ch,
      ),
    };
    const ref = locateIteration(ended, change + 1, iteration + 1);
    // The workspace first; the repository keeps every iteration too, should it be gone.
    return computeIterationSummary(this.o.vcs, ended, ref, [this.o.workspacePath, this.o.repoRoot]);
  }

  /**
   * HEAD of the workspace. Only an agent or a test command can move it behind
   * the runner's back, so what the runner last read or made holds until the
   * next agent turn or test run: each iteration asks git once, not three times.
   */
  private async head(): Promise<string> {
    return (this.knownHead ??= await this.o.vcs.head(this.o.workspacePath));
  }

  /** The files of the current change so far (HEAD against the change's base). */
  private async changeFiles(head: string): Promise<SnapshotFiles> {
    if (!this.changeBase || head === this.changeBase) return [];
    return this.o.vcs.changedFiles(this.o.workspacePath, this.changeBase, head);
  }

  private clearFiles(): void {
    clearProtocolFile(this.o.workspacePath, this.o.repoRoot, FEEDBACK_FILE);
    clearProtocolFile(this.o.workspacePath, this.o.repoRoot, COMMIT_MESSAGE_FILE);
  }

  private render(name: TemplateName, extra: { Feedback?: string; Message?: string }): Promise<string> {
    return this.prompts.render(
      name,
      templateVars(this.o.todo, {
        ...extra,
        WorkspacePath: this.o.workspacePath,
        BaseRev: this.o.baseRev,
        BaselineFailures: this.baselineFailures
          .map((r) => `- \`${r.command}\` (exit ${r.exit_code})`)
          .join('\n'),
        ...(this.o.resolving ? { Onto: this.o.resolving.onto, Conflicts: this.o.resolving.conflicts } : {}),
      }),
    );
  }

  private defaultMessage(): string {
    const type = this.o.todo.type === 'bug' ? 'fix' : this.o.todo.type === 'chore' ? 'chore' : 'feat';
    return `${type}: ${this.o.todo.title}`;
  }

  private async job(): Promise<Job> {
    const j = await this.o.store.jobs.get(this.o.jobId);
    if (!j) throw new JobFailure(`job ${this.o.jobId} vanished from the state store`);
    return j;
  }

  /** Logs an event to the job's events.jsonl and hands the same event to the listener. */
  private event(e: NewJobEvent): void {
    let logged;
    try {
      const { type, ...data } = e;
      logged = appendEvent(this.o.stateDir, this.o.jobId, type, data as EventData<typeof type>);
    } catch (err) {
      // The event log is a convenience, but a full disk ends the job: every
      // write after it (transcripts, the workspace, the store) would fail too.
      const full = asDiskFull(err, eventsFile(this.o.stateDir, this.o.jobId));
      if (full) this.noteDiskFull(full);
      logged = { ts: new Date().toISOString(), ...e } as ReturnType<typeof appendEvent>;
    }
    try {
      this.o.onEvent?.(logged);
    } catch {} // a listener's bug is not the job's failure
  }

  private warn(message: string): void {
    this.event({ type: 'warning', message });
  }

  /**
   * A write of the job's found its disk full (the event log, a transcript, a
   * file the agent asked for): the job stops as if cancelled and ends failed
   * with "disk full: <path>", while that can still be recorded.
   */
  private noteDiskFull(full: DiskFullError): void {
    this.diskFull ??= full;
    this.cancel({ status: 'failed', reason: this.diskFull.jobReason });
  }
}

/**
 * The error for a job whose end could not be recorded, even with the store's
 * reserve freed. A full disk: the command stops with exit 3 saying so, the
 * job left as its dead runner's, which the next cleanup ends (ii workspace
 * prune, a new job on its todo).
 */
function unrecorded(err: unknown, jobId: string, outcome: End): unknown {
  const full = asDiskFull(err);
  if (!full) return err;
  const why = outcome.reason ? ` (${outcome.reason.split('\n')[0]})` : '';
  return new DiskFullError(
    full.path,
    `Job ${jobId} could not be recorded as ${outcome.end}${why}: its agent and tests were stopped. ` +
      'Once there is space, ii workspace prune ends it as failed and frees its workspace; so does the next job started on its todo.',
  );
}

/** This process's start time (startTicks), given with each heartbeat: with the pid, it names this runner. */
const OWN_START = startTicks(process.pid);

/** Output kept per test command for its tail: enough for TAIL_LINES long lines. */
const TAIL_CHARS = 4000;

/** The last `n` lines of `text` (a trailing newline does not count as a line). */
export function lastLines(text: string, n: number): string {
  const lines = text.replace(/\n$/, '').split('\n');
  return lines.slice(-n).join('\n');
}

const firstLine = (s: string): string => {
  const l = s.split('\n').find((x) => x.trim());
  return l ? `: ${l.trim()}` : '';
};
