// The runner's collaborators and what it reports. It takes them as plain
// values and callbacks (the codex AgentLoop shape), so the CLI, the dashboard
// and the benchmarks plug in what they have and nothing reaches inside.
import type { AgentActivity, AgentSession, AgentSessionOptions, AgentSpec } from '../agent/types.js';
import type { FileChange, Job, JobReview, JobStage, TestResult, Todo } from '../model/index.js';
import type { StateStore } from '../state/api.js';
import type { Vcs } from '../vcs/vcs.js';
import type { Config } from './config.js';

export type StartAgent = (opts: AgentSessionOptions) => Promise<AgentSession>;

/** Where a job ends. */
export type FinalStatus = 'completed' | 'failed' | 'abandoned';

/**
 * Runs after an implement turn that changed files, in the same agent session
 * (auto-commit: the agent is asked to commit its work). It may move HEAD; it
 * must never throw for the job's sake (a failure is a warning).
 */
export type AfterImplement = (ctx: {
  session: AgentSession;
  workspace: string;
  todo: Todo;
  files: FileChange[];
}) => Promise<{ warning?: string } | void>;

export interface JobRunnerOptions {
  store: StateStore;
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
  /** Releases the job's session: done when completed (todo done), failed otherwise (todo reopened). */
  finishSession?: (outcome: 'done' | 'failed') => Promise<void>;
  afterImplement?: AfterImplement;
  onEvent?: (e: RunnerEvent) => void;
  /** Called once when the job reaches a terminal state (the journal plugs in here). */
  onFinished?: (job: Job) => void | Promise<void>;
  /** Heartbeat period; the default keeps the job well inside STALE_AFTER_MS. */
  heartbeatMs?: number;
  /** How often control requests are polled (abandon must be honoured within 2 s). */
  pollMs?: number;
  /** Environment for the test commands. */
  testEnv?: NodeJS.ProcessEnv;
}

/** The stage shown to people: the job's stage, or the project review (stored as reviewing). */
export type RunnerStage = JobStage | 'project-review';

export type RunnerEvent =
  | { type: 'stage'; from: RunnerStage | null; to: RunnerStage }
  | { type: 'change_started'; change_id: string; number: number }
  | { type: 'iteration'; change_id: string; iteration: number; commit_id: string; files: FileChange[] }
  | { type: 'agent_start'; purpose: string; agent_session_id: string }
  | { type: 'activity'; purpose: string; activity: AgentActivity }
  | { type: 'file_change'; file: FileChange }
  | { type: 'test_start'; command: string }
  | { type: 'test_output'; command: string; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'test_end'; result: TestResult }
  | { type: 'tests'; passed: boolean; results: TestResult[] }
  | { type: 'review'; project: boolean; review: JobReview }
  | { type: 'committed'; change_id: string; commit_id: string; message: string }
  | { type: 'warning'; message: string }
  | { type: 'finished'; job: Job };
