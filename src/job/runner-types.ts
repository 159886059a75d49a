// The runner's collaborators and what it reports. It takes them as plain
// values and callbacks (the codex AgentLoop shape), so the CLI, the dashboard
// and the benchmarks plug in what they have and nothing reaches inside.
import type { AfterImplement, AgentSession, AgentSessionOptions, AgentSpec } from '../agent/types.js';
import type { Job, JobEvent, Todo } from '../model/index.js';
import type { AsyncStateStore } from '../state/async-api.js';
import type { Vcs } from '../vcs/vcs.js';
import type { Config } from '../model/config.js';
import type { Sandbox } from '../proc/sandbox/sandbox.js';
import type { RemoteSpec } from '../model/remote.js';

export type StartAgent = (opts: AgentSessionOptions) => Promise<AgentSession>;

/** Where a job ends. */
export type FinalStatus = 'completed' | 'failed' | 'abandoned';

export interface JobRunnerOptions {
  store: AsyncStateStore;
  stateDir: string;
  vcs: Vcs;
  startAgent: StartAgent;
  agent: AgentSpec;
  config: Config;
  /** The job record, already created (by `ii job do` or `ii job retry`). */
  jobId: string;
  todo: Todo;
  repoRoot: string;
  workspacePath: string;
  baseRev: string;
  /**
   * The id of the job's first change, named before the runner (so `ii job do`
   * can print it at the start); the first implement pass makes the change,
   * its record and its refs, with it. Without it the runner picks one.
   */
  firstChangeId?: string;
  /** Releases the job's session: done when completed (todo done), failed otherwise (todo reopened). */
  finishSession?: (outcome: 'done' | 'failed') => Promise<void>;
  afterImplement?: AfterImplement;
  /** Each event as it is logged to the job's events.jsonl (the same object). */
  onEvent?: (e: JobEvent) => void;
  /** Called once when the job reaches a terminal state (the journal plugs in here). */
  onFinished?: (job: Job) => void | Promise<void>;
  /**
   * Called once, at once, when the job's end is recorded, before its wrap-up
   * (snapshot, workspace release, onFinished): ii run's runners step aside
   * there, since the next job starts on that record.
   */
  onEndRecorded?: () => void;
  /** Heartbeat period; the default keeps the job well inside STALE_AFTER_MS. */
  heartbeatMs?: number;
  /** How often control requests are polled (abandon must be honoured within 2 s). */
  pollMs?: number;
  /** Environment for the test commands. */
  testEnv?: NodeJS.ProcessEnv;
  /**
   * Go on when the tests already fail on the untouched base (the review is
   * told which); otherwise such a job stops before any agent turn.
   */
  allowFailingBaseline?: boolean;
  /**
   * A job resolving its landing's conflicts: every implement turn uses the
   * resolve-conflicts template with these, and no baseline runs (the
   * replayed tree is known to lack the branch's side of some lines).
   */
  resolving?: { onto: string; conflicts: string };
  /**
   * The sandbox every process of the job runs in; null: none. Unset: the
   * runner makes it from the config ([sandbox] mode).
   */
  sandbox?: Sandbox | null;
  /**
   * Where the job's refs are pushed as they are made (ref-pusher.ts); null:
   * nowhere. Unset: [remote] push, else on when the store is PostgreSQL.
   */
  refsRemote?: RemoteSpec | null;
}

export type { RunnerStage } from '../model/event.js';
