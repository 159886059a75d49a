// An AgentSession over the Agent Client Protocol: one agent process (its own
// process group) with one ACP session. The SDK does the JSON-RPC; our line
// stream sees every message first (transcript, tracker, activity), and every
// way a turn can go wrong ends in an Error, never a hang or an orphan.
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import {
  client,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type ClientConnection,
} from '@agentclientprotocol/sdk';
import { type FileChange, type Usage, ZERO_USAGE } from '../model/index.js';
import { fromMicros, MAX_MICROS, normalizeUsage, toMicros } from '../model/usage.js';
import { GitPathRefused, PathChanged, readConfined, writeConfined } from './confined-fs.js';
import { FileTracker } from './file-tracker.js';
import { lineStream } from './line-stream.js';
import { missingFileAnswer } from './missing-file.js';
import { answerPermission, type PermissionContext } from './permission-answer.js';
import { spawnInGroup, type GroupChild } from '../proc/recorded.js';
import { withoutStoreCredentials } from '../proc/child-env.js';
import { mark, treeCpuMs } from '../proc/trace.js';
import { TranscriptRecorder } from './transcript-recorder.js';
import type { AgentActivity, AgentSession, AgentSessionOptions, PromptResult, StopReason } from './types.js';
import { quotedOutput } from './quoted-output.js';
import { SessionUpdateParser } from './session-update.js';
import { WorkspaceRoot } from './workspace-path.js';

import { isObj, type Obj } from '../model/obj.js';

/**
 * A JSON-RPC error with the details its data holds: an agent whose prompt
 * handler threw answers "Internal error" with the reason in data.details
 * (a write that met a full disk: "ENOSPC: no space left on device, open …").
 */
function withDetails(err: Error): Error {
  const data = (err as { data?: unknown }).data;
  const details = isObj(data) && typeof data.details === 'string' ? data.details.trim().slice(0, 500) : '';
  return details && !err.message.includes(details) ? new Error(`${err.message}: ${details}`) : err;
}

/** Knobs beyond the contract, for tests and the benchmark. */
export interface AcpTuning {
  /** Longest accepted line from the agent (default 32 MiB, the SDK's own limit). */
  maxMessageBytes?: number;
  /** Longest initialize + session/new may take (default min(turn timeout, 60 s)). */
  startTimeoutMs?: number;
  /** How long session/set_title may take before the title goes on the first prompt instead (default 5 s). */
  titleTimeoutMs?: number;
  /** How long a cancelled turn may take to answer before it is abandoned (default 5 s). */
  cancelGraceMs?: number;
  /** close(): wait after closing stdin, then after SIGTERM (defaults 2 s, 3 s). */
  stopGrace?: Partial<StopGrace>;
}

export interface StopGrace {
  /** Time to exit on its own after stdin closes. */
  eofMs: number;
  /** Time between SIGTERM and SIGKILL. */
  termMs: number;
}

const STOP_REASONS = new Set<StopReason>([
  'end_turn',
  'max_tokens',
  'max_turn_requests',
  'refusal',
  'cancelled',
]);
const STDERR_TAIL = 2000;
/** Longest stderr line kept in the transcript: a longer one is cut (a dumped blob is not a log line). */
const STDERR_LINE_MAX = 2000;
/**
 * The end of a turn's message text kept for PromptResult.text (its only use,
 * the iteration summary, takes the last 2,000 characters): 400,000 chunks
 * joined whole held ~25 MB.
 */
export const TURN_TEXT_KEEP = 16 * 1024;

const usageOf = (u: Usage): Usage => normalizeUsage(u);
/** Resolves once `s` has delivered all it had (or is gone). */
const ended = (s: Readable) =>
  s.readableEnded || s.destroyed
    ? Promise.resolve()
    : new Promise<void>((r) => {
        s.once('end', r);
        s.once('close', r);
      });
const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

interface Turn {
  cancelled: boolean;
  text: string;
  /** The session's cost in micro-dollars when the turn began. */
  costAtStart: number;
  /** Rejects the turn from outside (crash, timeout, close). */
  fail: (err: Error) => void;
  settled: Promise<unknown>;
  /** Stop and restart the turn's timeout: time spent waiting for a person does not count. */
  pause: () => void;
  resume: () => void;
}

export class AcpSession implements AgentSession {
  id = '';
  private readonly ws: WorkspaceRoot;
  private readonly recorder: TranscriptRecorder;
  private readonly tracker: FileTracker;
  private child!: ChildProcess;
  private conn!: ClientConnection;
  private stderrTail = '';
  /** What the agent wrote on stderr since its last newline. */
  private stderrLine = '';
  private fatal: Error | null = null;
  /** Its process has exited (or was killed). */
  private exited = false;
  /** start() failed because the agent's process ended before it answered initialize: startAgent may start its fallback. */
  exitedStarting = false;
  /** Whether the agent answered initialize. */
  private initialized = false;
  private onFatal: ((e: Error) => void)[] = [];
  private turn: Turn | null = null;
  /** Set by cancel() until the next prompt. */
  private cancelled = false;
  private total: Usage = { ...ZERO_USAGE };
  /**
   * Cost in whole micro-dollars (model/usage.ts): the session's total, and
   * the agent's cumulative figure from its last usage_update.
   */
  private costMicros = 0;
  private reportedMicros = 0;
  private readonly updates = new SessionUpdateParser();
  private closing: Promise<void> | null = null;
  private readonly grace: StopGrace;
  /** The agent's own name from initialize (agentInfo.name), for its quirks. */
  private agentName: string | undefined;
  /** The agent's process group (it leads it): close() ends all of it. */
  private group: GroupChild | null = null;
  /** The agent took the title through session/set_title. */
  private titled = false;
  /** A prompt has been sent: the first one carries the title where set_title could not. */
  private prompted = false;
  /** Requests waiting for a person: aborted by cancel() and close(). */
  private readonly asking = new Set<AbortController>();
  private readonly permissionContext: PermissionContext;

  constructor(
    private readonly o: AgentSessionOptions,
    private readonly t: AcpTuning = {},
  ) {
    this.ws = new WorkspaceRoot(o.cwd);
    this.recorder = new TranscriptRecorder(
      o.transcriptPath,
      o.transcriptMaxBytes,
      (err) => o.onWriteError?.(err, o.transcriptPath),
      o.transcriptSink,
    );
    this.tracker = new FileTracker(this.ws, (f) => o.onFileChange?.(f));
    this.grace = { eofMs: t.stopGrace?.eofMs ?? 2000, termMs: t.stopGrace?.termMs ?? 3000 };
    this.permissionContext = {
      ws: this.ws,
      policy: o.permissions,
      askPerson: o.askPerson,
      note: (m) => this.recorder.warning(m),
      warn: (m) => this.warn(m),
      cancelled: () => this.cancelled || this.closing !== null,
      waiting: () => {
        const ctl = new AbortController();
        this.asking.add(ctl);
        const turn = this.turn;
        turn?.pause();
        return {
          signal: ctl.signal,
          done: () => {
            this.asking.delete(ctl);
            turn?.resume();
          },
        };
      },
    };
  }

  /** Ends every wait for a person: their requests are answered `cancelled`. */
  private abortAsks(): void {
    for (const ctl of this.asking) ctl.abort();
  }

  private activity(a: AgentActivity): void {
    try {
      this.o.onActivity?.(a);
    } catch {}
  }

  private warn(message: string): void {
    this.activity({ kind: 'warning', message });
  }

  /** Ends the session for good: every wait (start, turn) rejects with `err`. */
  private die(err: Error): void {
    if (this.fatal) return;
    this.fatal = err;
    for (const f of this.onFatal.splice(0)) f(err);
    this.turn?.fail(err);
  }

  private whenFatal(): Promise<never> {
    return new Promise((_, reject) => {
      if (this.fatal) reject(this.fatal);
      else this.onFatal.push(reject);
    });
  }

  /** The agent's pid, which leads its process group (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<this> {
    const { agent, cwd } = this.o;
    const [cmd, ...args] = agent.command;
    if (!cmd) throw new Error(`agent ${agent.name} has an empty command`);
    // Inside the job's sandbox the environment loses what looks like a
    // credential, except what [agent.env] names (the user put it there); the
    // store's URL and password go sandboxed or not, whatever names them.
    const env = withoutStoreCredentials({ ...process.env, ...agent.env });
    const run = this.o.sandbox
      ? this.o.sandbox.wrap(cmd, args, env, Object.keys(agent.env))
      : { command: cmd, args, env };
    // Its own process group, so close() reaches all it started: language servers, shells, MCP helpers.
    this.group = spawnInGroup(
      run.command,
      run.args,
      { cwd, env: run.env, stdio: ['pipe', 'pipe', 'pipe'] },
      this.o.recordGroup ? { recorder: this.o.recordGroup, label: `agent ${agent.name}` } : undefined,
    );
    this.child = this.group.child;
    mark('agent_spawned', { agent_pid: this.group.child.pid ?? null });
    const child = this.child;
    child.on('error', (err) => {
      const e = err as NodeJS.ErrnoException;
      this.die(
        new Error(
          e.code === 'ENOENT'
            ? `cannot start agent ${agent.name}: ${cmd} was not found`
            : `cannot start agent ${agent.name} (${cmd}): ${e.message}`,
        ),
      );
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => {
      this.stderrTail = (this.stderrTail + s).slice(-STDERR_TAIL);
      this.onStderr(s);
    });
    child.stderr!.on('end', () => {
      this.recordStderr(this.stderrLine);
      this.stderrLine = '';
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      if (this.closing) return;
      const during = this.turn !== null;
      const report = () => {
        if (this.closing) return;
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const tail = this.stderrTail.trim();
        const msg = `the agent (${agent.name}) ${how}${during ? ' during its turn' : ''}${tail ? `; its last output on stderr:\n${tail}` : ''}`;
        this.recorder.warning(msg);
        this.die(new Error(msg));
      };
      // What it said just before dying may still be in the pipes: on stderr
      // the reason, on stdout perhaps why it is not an agent (onNotAcp).
      let t: NodeJS.Timeout | undefined;
      void Promise.race([
        Promise.all([ended(child.stderr!), ended(child.stdout!)]),
        new Promise((r) => (t = setTimeout(r, 200))),
      ]).then(() => {
        clearTimeout(t);
        report();
      });
    });

    const stream = lineStream(
      child.stdout!,
      child.stdin!,
      this.recorder,
      {
        onUpdate: (p) => this.update(p),
        onPromptResult: (r) => this.promptResult(r),
        onWarning: (m) => this.warn(m),
        onFatal: (m) => this.die(new Error(m)),
        onNotAcp: (output) => {
          const msg =
            `the agent (${agent.name}) does not speak ACP: before any JSON-RPC message it wrote ${quotedOutput(output)} on stdout. ` +
            `Check that \`${agent.command.join(' ')}\` starts it in its ACP mode (run by hand, it should wait silently for JSON-RPC input).`;
          this.recorder.warning(msg);
          this.die(new Error(msg));
        },
      },
      this.t.maxMessageBytes ?? 32 * 1024 * 1024,
    );

    const app = client({ name: 'incrementum' })
      .onRequest(methods.client.session.requestPermission, ({ params }) =>
        // After session/cancel every request is answered `cancelled` (ACP asks so).
        answerPermission(this.permissionContext, params.toolCall, params.options),
      )
      .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
        const p = this.confined(params.path);
        let content: string;
        try {
          content = await readConfined(this.ws, p);
        } catch (err) {
          if (err instanceof PathChanged || err instanceof GitPathRefused)
            throw this.refuse(params.path, err.message);
          if ((err as NodeJS.ErrnoException).code === 'ENOENT')
            return missingFileAnswer(this.agentName, params.path);
          throw RequestError.invalidParams({ path: p }, (err as Error).message);
        }
        if (params.line != null || params.limit != null) {
          const lines = content.split('\n');
          const from = Math.max(0, (params.line ?? 1) - 1);
          content = lines.slice(from, params.limit != null ? from + params.limit : undefined).join('\n');
        }
        return { content };
      })
      .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
        const p = this.confined(params.path);
        try {
          await writeConfined(this.ws, p, params.content);
        } catch (err) {
          if (err instanceof PathChanged || err instanceof GitPathRefused)
            throw this.refuse(params.path, err.message);
          this.o.onWriteError?.(err as Error, p);
          throw err;
        }
        return {};
      });
    this.conn = app.connect(stream);

    const startMs = this.t.startTimeoutMs ?? Math.min(this.o.turnTimeoutMs, 60_000);
    let timer: NodeJS.Timeout | undefined;
    let timedOut: (err: Error) => void = () => {};
    const timeout = new Promise<never>((_, reject) => (timedOut = reject));
    let settled = false;
    const arm = (ms: number) => {
      if (settled) return; // lost the race meanwhile (the agent died): no timer left behind
      timer = setTimeout(
        () =>
          timedOut(new Error(`the agent (${agent.name}) did not finish starting within ${seconds(startMs)}`)),
        ms,
      );
    };
    const t0 = performance.now();
    arm(startMs);
    try {
      await Promise.race([
        (async () => {
          const init = await this.conn.agent.request(methods.agent.initialize, {
            protocolVersion: PROTOCOL_VERSION,
            clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
            clientInfo: { name: 'incrementum', version: '0' },
          });
          this.agentName = init.agentInfo?.name;
          this.initialized = true;
          mark('acp_initialized', { agent_cpu: treeCpuMs(this.child?.pid) });
          if (this.o.beforeSession) {
            // The workspace's own making is not the agent's start: off the clock.
            clearTimeout(timer);
            const used = performance.now() - t0;
            await this.o.beforeSession;
            arm(Math.max(0, startMs - used));
          }
          const { title } = this.o;
          const s = await this.conn.agent.request(methods.agent.session.new, {
            cwd: this.ws.path,
            mcpServers: [],
            ...(title ? { _meta: { incrementum: { title } } } : {}),
          });
          this.id = s.sessionId;
          mark('acp_session');
          if (title) await this.setTitle(title, init.agentCapabilities);
        })(),
        this.whenFatal(),
        timeout,
      ]);
    } catch (err) {
      // As in prompt(): an agent that exits while starting closes the
      // connection first, and its exit (with what it said on stderr) is
      // reported moments later; that is the reason worth telling, not
      // "ACP connection closed".
      if (!this.fatal && /connection closed/i.test(String((err as Error)?.message)))
        await Promise.race([this.whenFatal().catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
      const cause = this.fatal ?? err;
      // Only before initialize was answered: after it, the program it was started from is known to work, and its crash is the agent's.
      this.exitedStarting = this.exited && !this.initialized;
      await this.close();
      throw cause;
    } finally {
      settled = true;
      clearTimeout(timer);
    }
    return this;
  }

  /**
   * Titles the session, where the agent lets a client: ACP's session/new has
   * no title, and its session/set_title (unstable) is for agents that
   * advertise `sessionCapabilities.title`. Others (opencode 1.18,
   * claude-agent-acp 0.101 and gemini-cli 0.61 advertise none) title a
   * session themselves from its first prompt, so prompt() puts the title on
   * that prompt's first line. A refusal is a warning: the title helps people find the session, the job
   * does not need it.
   */
  private async setTitle(title: string, capabilities: unknown): Promise<void> {
    const sessionCaps = isObj(capabilities) ? capabilities.sessionCapabilities : undefined;
    if (!isObj(sessionCaps) || !isObj(sessionCaps.title)) return;
    // Bounded on its own: an agent that never answers it must not fail the
    // start (whose timeout would blame the agent's start for it).
    const limit = this.t.titleTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.conn.agent.request('session/set_title', { sessionId: this.id, title }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${seconds(limit)}`)), limit);
        }),
      ]);
      this.titled = true;
    } catch (err) {
      const msg = `the agent (${this.o.agent.name}) did not take the session's title (${(err as Error).message}): it goes on the first prompt`;
      this.recorder.warning(msg);
      this.warn(msg);
    } finally {
      clearTimeout(timer);
    }
  }

  /** An absolute path inside the workspace for the fs/* methods, or a refusal. */
  private confined(path: string): string {
    const p = this.ws.resolveInside(path);
    if (p === null) throw this.refuse(path, `outside the workspace ${this.ws.path}`);
    return p;
  }

  /** The error refusing the agent `path`, told in the transcript and as a warning. */
  private refuse(path: string, why: string): RequestError {
    const msg = `refused the agent access to ${path}: ${why}`;
    this.recorder.warning(msg);
    this.warn(msg);
    return RequestError.invalidParams({ path }, msg);
  }

  private update(params: Obj): void {
    const u = this.updates.parse(params);
    if (!u) return;
    switch (u.kind) {
      case 'message':
        if (this.turn) {
          this.turn.text += u.text;
          if (this.turn.text.length > 2 * TURN_TEXT_KEEP)
            this.turn.text = this.turn.text.slice(-TURN_TEXT_KEEP);
        }
        return this.activity(u);
      case 'tool':
        // The tracker reads the call's content (the diffs and paths it touched) from the update itself.
        this.tracker.ingest(params.update as Obj);
        return this.activity(u);
      case 'cost': {
        const micros = toMicros(u.amount);
        this.costMicros = Math.min(MAX_MICROS, this.costMicros + Math.max(0, micros - this.reportedMicros));
        this.reportedMicros = micros;
        this.total.cost = fromMicros(this.costMicros);
        return this.activity({ kind: 'usage', usage: usageOf(this.total) });
      }
      default:
        return this.activity(u);
    }
  }

  /** Token counts from the prompt response (an unstable ACP field many agents send). */
  private lastTurnTokens: { input: number; output: number } | null = null;
  private promptResult(r: Obj): void {
    const u = r.usage;
    if (!isObj(u)) return;
    const n = (v: unknown) =>
      typeof v === 'number' && Number.isFinite(v) && v >= 0
        ? Math.min(Number.MAX_SAFE_INTEGER, Math.floor(v))
        : 0;
    this.lastTurnTokens = { input: n(u.inputTokens), output: n(u.outputTokens) };
  }

  async prompt(text: string): Promise<PromptResult> {
    if (this.fatal) throw this.fatal;
    if (this.closing) throw new Error('the agent session is closed');
    if (this.turn) throw new Error('a prompt is already running in this agent session');
    let fail!: (e: Error) => void;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    const limit = this.o.turnTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    /** Time of the turn left when the timer is stopped; the timer's deadline while it runs. */
    let left = limit;
    let deadline = 0;
    let paused = 0;
    const arm = () => {
      deadline = Date.now() + left;
      timer = setTimeout(() => {
        // Ask the agent to stop (answering what it still asks `cancelled`), but
        // the turn fails now: a turn past its limit is an error either way.
        void this.cancel();
        fail(
          new Error(
            `the agent's turn took longer than ${seconds(limit)} ([agent] turn-timeout-seconds) and was cancelled`,
          ),
        );
      }, left);
    };
    const turn: Turn = {
      cancelled: false,
      text: '',
      costAtStart: this.costMicros,
      fail,
      settled: failed,
      pause: () => {
        if (paused++ > 0) return;
        clearTimeout(timer);
        left = Math.max(0, deadline - Date.now());
      },
      resume: () => {
        if (--paused === 0 && this.turn === turn) arm();
      },
    };
    this.turn = turn;
    this.cancelled = false;
    this.recorder.beginTurn();
    this.lastTurnTokens = null;
    arm();
    const { title } = this.o;
    const first = !this.prompted;
    this.prompted = true;
    const request = this.conn.agent.request(methods.agent.session.prompt, {
      sessionId: this.id,
      prompt: [{ type: 'text', text: first && title && !this.titled ? `${title}\n\n${text}` : text }],
    });
    turn.settled = request.catch(() => {});
    try {
      const res = await Promise.race([request, failed]);
      const stopReason: StopReason = STOP_REASONS.has(res.stopReason) ? res.stopReason : 'end_turn';
      const tokens = this.lastTurnTokens ?? { input: 0, output: 0 };
      this.total.input_tokens += tokens.input;
      this.total.output_tokens += tokens.output;
      const usage: Usage = {
        input_tokens: tokens.input,
        output_tokens: tokens.output,
        cost: fromMicros(Math.max(0, this.costMicros - turn.costAtStart)),
      };
      if (this.lastTurnTokens) this.activity({ kind: 'usage', usage: usageOf(this.total) });
      return { stopReason, usage, text: turn.text };
    } catch (err) {
      // The connection closing is the symptom; the agent's exit (reported
      // moments later) is the cause worth telling.
      if (!this.fatal && !this.closing && /connection closed/i.test(String((err as Error)?.message)))
        await Promise.race([this.whenFatal().catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
      if (this.fatal) throw this.fatal;
      throw err instanceof Error ? withDetails(err) : new Error(String(err));
    } finally {
      clearTimeout(timer);
      this.turn = null;
      this.recorder.flush();
    }
  }

  files(): FileChange[] {
    return this.tracker.files();
  }

  usage(): Usage {
    return usageOf(this.total);
  }

  async cancel(): Promise<void> {
    const turn = this.turn;
    if (!turn || turn.cancelled) return;
    turn.cancelled = true;
    this.cancelled = true;
    this.abortAsks();
    await this.conn.agent.notify(methods.agent.session.cancel, { sessionId: this.id }).catch(() => {});
    const grace = this.t.cancelGraceMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), grace)));
    const r = await Promise.race([turn.settled.then(() => 'done' as const), late]);
    clearTimeout(timer);
    if (r === 'late')
      turn.fail(new Error(`the agent did not end its turn within ${seconds(grace)} of session/cancel`));
  }

  /**
   * The agent's stderr, line by line, into the transcript as it comes: its
   * own log says what it is stuck on (a model it cannot reach, retrying),
   * which the board's live pane and ii job logs show while it says nothing
   * over ACP.
   */
  private onStderr(s: string): void {
    const lines = (this.stderrLine + s).split('\n');
    this.stderrLine = lines.pop() ?? '';
    for (const l of lines) this.recordStderr(l);
    // A line that never ends is not held: its first STDERR_LINE_MAX characters are recorded, cut.
    if (this.stderrLine.length > STDERR_LINE_MAX) {
      this.recordStderr(this.stderrLine);
      this.stderrLine = '';
    }
  }

  private recordStderr(line: string): void {
    const l = line.replace(/\r$/, '');
    if (!l.trim()) return;
    this.recorder.stderr(l.length > STDERR_LINE_MAX ? `${l.slice(0, STDERR_LINE_MAX)}…` : l);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.abortAsks();
      this.turn?.fail(new Error('the agent session was closed during the turn'));
      await this.group?.stop(this.grace.termMs, this.grace.eofMs);
      try {
        this.conn?.close();
      } catch {}
      this.recorder.end();
    })();
    return this.closing;
  }
}

/** StartAgent: launches the agent and opens its ACP session in the workspace. */
export async function startAgent(opts: AgentSessionOptions & AcpTuning): Promise<AcpSession> {
  const first = new AcpSession(opts, opts);
  try {
    return await first.start();
  } catch (err) {
    // Its fallback (the scripted agent's bundle, when its startup snapshot
    // could not be loaded: src/agent/resolve.ts) is for a process that ended
    // while starting, not for one too slow or not speaking ACP.
    const fallback = opts.agent.fallback;
    if (!fallback || !first.exitedStarting) throw err;
    const message = `${(err as Error).message}\nit is started again with \`${fallback.join(' ')}\``;
    opts.onActivity?.({ kind: 'warning', message });
    return await new AcpSession(
      { ...opts, agent: { ...opts.agent, command: fallback, fallback: undefined } },
      opts,
    ).start();
  }
}
