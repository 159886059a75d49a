// The agent surface the runner and the dashboard use. The ACP wire, the SDK
// and process handling stay behind it (src/agent/*), so the runner never sees
// JSON-RPC and a test can drive a real agent through the same calls.
import type { FileChange, Todo, Usage } from '../model/index.js';
import type { AskOutcome, NewPermissionAsk } from '../model/permission-ask.js';
import type { PermissionPolicy } from './permission-policy.js';
import type { GroupRecorder } from '../proc/recorded.js';
import type { Sandbox } from '../proc/sandbox/sandbox.js';
import type { TranscriptSink } from '../state/log-shipper.js';
import type { SessionUpdate } from './session-update.js';

/** An ACP agent to launch over stdio. */
export interface AgentSpec {
  /** Preset name or the command's basename, for messages and the dashboard. */
  name: string;
  /** argv; argv[0] is resolved on PATH. */
  command: string[];
  env: Record<string, string>;
  /**
   * The command to start it with when `command`'s process ends before it has
   * answered initialize: the scripted agent's bundle, for a startup snapshot
   * node refuses (exit 14) or crashes on (another build of node, a damaged file).
   */
  fallback?: string[];
}

export type StopReason = 'end_turn' | 'max_tokens' | 'max_turn_requests' | 'refusal' | 'cancelled';

export interface PromptResult {
  stopReason: StopReason;
  /** Usage of this turn (tokens from the prompt response, cost from usage_update). */
  usage: Usage;
  /** The agent's message text of this turn, concatenated: its end, when longer than 16 KiB (TURN_TEXT_KEEP). */
  text: string;
}

/**
 * Something the agent did, live: what its session/updates say (parsed by
 * session-update.ts, as the transcript reader parses them), its usage so far,
 * and warnings about it (what the session refused it or skipped of its
 * output; each is in its transcript too). The runner logs the warnings as job
 * events (src/job/agent-activity.ts maps each kind: a new kind gets its case
 * there, as a permission request will).
 */
export type AgentActivity =
  | Exclude<SessionUpdate, { kind: 'cost' }>
  | { kind: 'usage'; usage: Usage }
  | { kind: 'warning'; message: string };

export interface AgentSessionOptions {
  agent: AgentSpec;
  /** The workspace: session/new's cwd, and the only place files may be touched. */
  cwd: string;
  /** JSONL file that receives every message both ways. */
  transcriptPath: string;
  /** Most bytes one turn may take in the transcript ([agent] transcript-max-mb; default 32 MiB). */
  transcriptMaxBytes?: number;
  /** The shared store's copy of the transcript (state/log-shipper.ts), when the store is shared. */
  transcriptSink?: TranscriptSink;
  /** Per-turn timeout; a turn past it is cancelled and fails with a clear error. */
  turnTimeoutMs: number;
  onActivity?: (a: AgentActivity) => void;
  onFileChange?: (f: FileChange) => void;
  /**
   * A write the session makes for the job failed: its transcript (which it
   * then stops writing) or a file the agent asked it to write (the agent is
   * told too). The runner ends the job when the disk is full.
   */
  onWriteError?: (err: Error, path: string) => void;
  /** Records the agent's process group for its job, so a dead runner's agent can be ended. */
  recordGroup?: GroupRecorder;
  /**
   * The session's title, naming the job (the job-subcommand spec's topic that
   * includes the job id), so the agent's own session list leads back to the
   * job. Sent as session/new's `_meta`, and set with session/set_title where
   * the agent advertises `sessionCapabilities.title` (acp-session.ts).
   */
  title?: string;
  /** The job's sandbox: the agent, and all it starts, runs inside it (src/proc/sandbox). */
  sandbox?: Sandbox | null;
  /** [agent] permissions and the job's allow-always rules; absent: "workspace" (permission-policy.ts). */
  permissions?: PermissionPolicy;
  /**
   * A request the policy sends to a person: resolves with how it ended (the
   * runner stores it and waits for an answer from any process, or its
   * timeout). `signal` aborts when the turn is cancelled or the session
   * closes; it must then resolve `cancelled` soon. Absent: such a request
   * is allowed (inside the workspace), as under "workspace".
   */
  askPerson?: AskPerson;
  /**
   * What session/new waits for, when the agent starts before its workspace
   * is made (its folder is there, its files not yet: a free workspace being
   * reset): the process and ACP's initialize go ahead, and the workspace is
   * named to the agent (session/new's cwd) once this resolves. A rejection
   * fails the start. The wait is not counted in the start's timeout.
   */
  beforeSession?: Promise<unknown>;
}

/** How a request a person was asked ended, and their note (for the agent). */
export interface AskReply {
  outcome: AskOutcome;
  note: string | null;
}
export type AskPerson = (ask: NewPermissionAsk, signal: AbortSignal) => Promise<AskReply>;

/**
 * One agent process with one ACP session (initialize → session/new). Several
 * prompts may go to the same session (the auto-commit prompt follows the
 * implement prompt). close() always leaves no process of the agent's group.
 */
export interface AgentSession {
  /** The ACP session id. */
  readonly id: string;
  /** Rejects with an Error whose message says what went wrong (crash, garbage, timeout, hang). */
  prompt(text: string): Promise<PromptResult>;
  /** Files the session modified, from the tracker (a session is one turn: the iteration's). */
  files(): FileChange[];
  /** Total usage of the session so far. */
  usage(): Usage;
  /** session/cancel, answer pending permission requests `cancelled`, end the turn. */
  cancel(): Promise<void>;
  /** Close stdin, then SIGTERM, then SIGKILL the process group after grace periods. */
  close(): Promise<void>;
}

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
  /** What the agent said at the end of its implement turn: the iteration's summary. */
  summary?: string;
}) => Promise<{ warning?: string } | void>;
