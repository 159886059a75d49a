#!/usr/bin/env node
// The scripted agent: a real ACP agent over stdio (the SDK's agent side) that
// plays a scenario (scenario.ts) instead of thinking. `ii demo` and the tests
// run it; its messages are shaped like real agents' (the styles in scenario.ts).
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { startupSnapshot } from 'node:v8';
import {
  agent,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type AgentContext,
  type RequestPermissionResponse,
} from '@agentclientprotocol/sdk';
import {
  estimatedUsage,
  loadScenario,
  nextTurn,
  promptKind,
  type Action,
  type PromptKind,
  type Turn,
} from './scenario.js';

// Read from the environment when the agent starts (main()), never as the
// module loads: a startup snapshot (below) loads it once, at build time.
let scenarioPath: string | null = null;
let statePath = '';

/**
 * Which scenario this agent plays and where it keeps its place. A file: every
 * job on it shares one state file, so jobs run one after another take turns
 * in order. A folder: each todo plays `<todo id>.json` (else `default.json`)
 * with a state file of its own, so jobs running at once (`ii run --jobs N`)
 * never take each other's turns; a retry of the todo goes on where it was.
 * The job runner tells every agent its todo in II_TODO_ID.
 */
function scenarioFiles(env: NodeJS.ProcessEnv): { scenarioPath: string | null; statePath: string } {
  const given = env.II_SCRIPTED_SCENARIO || null;
  if (!given) return { scenarioPath: null, statePath: '' };
  // A missing file fails at the first prompt, with loadScenario's own error.
  if (!isA(given, 'dir'))
    return { scenarioPath: given, statePath: env.II_SCRIPTED_STATE || `${given}.state` };
  const todo = (env.II_TODO_ID ?? '').replace(/[^A-Za-z0-9_-]/g, '') || 'default';
  const own = join(given, `${todo}.json`);
  const fallback = join(given, 'default.json');
  return {
    // A folder with neither file: default turns only.
    scenarioPath: isA(own, 'file') ? own : isA(fallback, 'file') ? fallback : null,
    statePath: join(given, `${todo}.state`),
  };
}

function isA(path: string, kind: 'file' | 'dir'): boolean {
  try {
    const st = statSync(path);
    return kind === 'file' ? st.isFile() : st.isDirectory();
  } catch {
    return false;
  }
}

interface Session {
  cwd: string;
  cancelled: boolean;
  /** Set by session/set_title. */
  title?: string;
}
const sessions = new Map<string, Session>();
let stubborn = false;
let costMicros = 0;
let used = 0;
let callSeq = 0;

// Loaded at its first use, not with the module: Node does not vouch for
// child_process in a startup snapshot (scripts/scripted-snapshot.mjs), and
// most turns run nothing.
const childProcess = () => process.getBuiltinModule('node:child_process');

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function becomeStubborn(): void {
  stubborn = true;
  process.on('SIGTERM', () => {});
  process.on('SIGHUP', () => {});
  // Nor does a client that went away (kill -9) end it: a write to the closed
  // pipe fails quietly, as with agents that outlive their client in the field.
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
  setInterval(() => {}, 1 << 30); // stays alive after stdin closes
}

function defaultTurn(kind: PromptKind, prompt: string): Turn {
  const turn = (actions: Action[]): Turn => ({ actions, stop_reason: 'end_turn' });
  switch (kind) {
    case 'review':
    case 'project-review':
      return turn([{ type: 'feedback', verdict: 'ACCEPT', text: '' }]);
    case 'commit-message':
      return turn([{ type: 'commit_message', text: 'Make the change the todo asks for' }]);
    case 'auto-commit': {
      // Commit exactly the files the prompt lists, as a well-behaved agent would.
      const files = [...prompt.matchAll(/^- (.+) \((?:new file|deleted|\+\d+\/-\d+)\)$/gm)].map((m) => m[1]!);
      if (!files.length) return turn([]);
      return turn([
        { type: 'message', text: `committing ${files.join(', ')}` },
        { type: 'git_commit', files, message: 'chore: work of this iteration' },
      ]);
    }
    default:
      return turn([]);
  }
}

async function run(
  cx: AgentContext,
  sessionId: string,
  s: Session,
  prompt: string,
): Promise<Turn['stop_reason']> {
  const kind = promptKind(prompt);
  const scenario = scenarioPath ? loadScenario(scenarioPath) : null;
  const turn = (scenario && nextTurn(scenario, kind, statePath)) || defaultTurn(kind, prompt);
  const update = (u: Record<string, unknown>) =>
    cx.notify(methods.client.session.update, { sessionId, update: u } as never);
  for (const a of turn.actions) {
    if (s.cancelled && !stubborn) return 'cancelled';
    await perform(cx, sessionId, s, a, update);
  }
  if (s.cancelled && !stubborn) return 'cancelled';
  const usage = turn.usage === undefined ? estimatedUsage(prompt, turn.actions) : turn.usage;
  lastUsage.set(sessionId, usage ?? undefined);
  if (usage) {
    // Cumulative, in whole micro-dollars first: a real agent's total has no float noise.
    costMicros += Math.round(usage.cost * 1e6);
    used += usage.input_tokens + usage.output_tokens;
    await update({
      sessionUpdate: 'usage_update',
      used,
      size: 200_000,
      cost: { amount: costMicros / 1e6, currency: 'USD' },
    });
  }
  return turn.stop_reason;
}

const lastUsage = new Map<string, Turn['usage'] | undefined>();

async function perform(
  cx: AgentContext,
  sessionId: string,
  s: Session,
  a: Action,
  update: (u: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(s.cwd, p));
  // What goes to the client's fs/* and permission methods: as written, since
  // resolve() would fold `link/..` away before the client could judge it.
  const raw = (p: string) => (isAbsolute(p) ? p : `${s.cwd}/${p}`);
  const id = () => `call_${++callSeq}`;
  switch (a.type) {
    case 'message':
    case 'thought':
      return update({
        sessionUpdate: a.type === 'message' ? 'agent_message_chunk' : 'agent_thought_chunk',
        content: { type: 'text', text: a.text },
      });
    case 'plan':
      return update({
        sessionUpdate: 'plan',
        entries: a.entries.map((content) => ({ content, priority: 'medium', status: 'pending' })),
      });
    case 'write':
    case 'edit': {
      const path = abs(a.path);
      const before = readIfAny(path);
      const existed = before !== null;
      let after: string;
      if (a.type === 'write') after = a.content;
      else {
        if (before === null || !before.includes(a.old)) {
          const tc = id();
          await update({
            sessionUpdate: 'tool_call',
            toolCallId: tc,
            title: `edit ${a.path}`,
            kind: 'edit',
            status: 'pending',
            locations: [{ path }],
          });
          return update({
            sessionUpdate: 'tool_call_update',
            toolCallId: tc,
            status: 'failed',
            content: [
              { type: 'content', content: { type: 'text', text: `old text not found in ${a.path}` } },
            ],
          });
        }
        after = before.replace(a.old, a.new);
      }
      const tc = id();
      if (a.style === 'opencode') {
        await update({
          sessionUpdate: 'tool_call',
          toolCallId: tc,
          title: a.type,
          kind: 'edit',
          status: 'pending',
          rawInput: {},
        });
        const rawInput =
          a.type === 'write'
            ? { filePath: path, content: a.content }
            : { filePath: path, oldString: a.old, newString: a.new };
        await update({
          sessionUpdate: 'tool_call_update',
          toolCallId: tc,
          status: 'in_progress',
          kind: 'edit',
          title: a.type,
          locations: [{ path }],
          rawInput,
        });
        writeFile(path, after);
        if (a.type === 'write')
          return update({
            sessionUpdate: 'tool_call_update',
            toolCallId: tc,
            status: 'completed',
            title: a.path,
            content: [{ type: 'content', content: { type: 'text', text: 'Wrote file successfully.' } }],
            rawOutput: { output: 'Wrote file successfully.', metadata: { filepath: path, exists: existed } },
          });
        const adds = a.new.split('\n').length;
        const dels = a.old.split('\n').length;
        return update({
          sessionUpdate: 'tool_call_update',
          toolCallId: tc,
          status: 'completed',
          title: a.path,
          content: [{ type: 'diff', path: '', oldText: a.old, newText: a.new }],
          rawOutput: {
            output: '',
            metadata: { filediff: { file: path, before, after, additions: adds, deletions: dels } },
          },
        });
      }
      await update({
        sessionUpdate: 'tool_call',
        toolCallId: tc,
        title: `${a.type} ${a.path}`,
        kind: 'edit',
        status: 'pending',
        locations: [{ path }],
      });
      if (a.style === 'fs') {
        try {
          await cx.request(methods.client.fs.writeTextFile, { sessionId, path: raw(a.path), content: after });
        } catch (err) {
          // A refused write fails the tool call, as real agents report it; the turn goes on.
          await update({ sessionUpdate: 'tool_call_update', toolCallId: tc, status: 'failed' });
          return update({
            sessionUpdate: 'agent_message_chunk',
            content: { type: 'text', text: `write refused: ${(err as Error).message}` },
          });
        }
      } else writeFile(path, after);
      return update({
        sessionUpdate: 'tool_call_update',
        toolCallId: tc,
        status: 'completed',
        content: [{ type: 'diff', path, oldText: before, newText: after }],
      });
    }
    case 'delete': {
      const path = abs(a.path);
      const tc = id();
      await update({
        sessionUpdate: 'tool_call',
        toolCallId: tc,
        title: `delete ${a.path}`,
        kind: 'delete',
        status: 'in_progress',
        locations: [{ path }],
      });
      rmSync(path, { force: true });
      return update({ sessionUpdate: 'tool_call_update', toolCallId: tc, status: 'completed' });
    }
    case 'feedback':
      writeFile(join(s.cwd, '.incrementum-feedback'), `${a.verdict}\n\n${a.text}\n`);
      return;
    case 'commit_message':
      writeFile(join(s.cwd, '.incrementum-commit-message'), a.text + '\n');
      return;
    case 'shell': {
      const tc = id();
      await update({
        sessionUpdate: 'tool_call',
        toolCallId: tc,
        title: 'bash',
        kind: 'execute',
        status: 'in_progress',
        rawInput: { command: a.command },
      });
      const ok =
        childProcess().spawnSync('sh', ['-c', a.command], { cwd: s.cwd, stdio: 'ignore' }).status === 0;
      return update({
        sessionUpdate: 'tool_call_update',
        toolCallId: tc,
        status: ok ? 'completed' : 'failed',
      });
    }
    case 'git_commit': {
      const tc = id();
      const files = a.files ?? [];
      await update({
        sessionUpdate: 'tool_call',
        toolCallId: tc,
        title: 'git commit',
        kind: 'execute',
        status: 'in_progress',
      });
      let ok = true;
      try {
        childProcess().execFileSync('git', ['add', '-A', '--', ...(files.length ? files : ['.'])], {
          cwd: s.cwd,
          stdio: 'pipe',
        });
        childProcess().execFileSync(
          'git',
          ['commit', '-q', '-m', a.message, ...(files.length ? ['--', ...files] : [])],
          {
            cwd: s.cwd,
            stdio: 'pipe',
          },
        );
      } catch {
        ok = false;
      }
      return update({
        sessionUpdate: 'tool_call_update',
        toolCallId: tc,
        status: ok ? 'completed' : 'failed',
      });
    }
    case 'delay':
      await sleep(a.ms);
      return;
    case 'stderr':
      // Written out before the next action, as a real agent's log line would be.
      await new Promise<void>((res) => process.stderr.write(`${a.text}\n`, () => res()));
      return;
    case 'read': {
      let text: string;
      try {
        const r = await cx.request(methods.client.fs.readTextFile, { sessionId, path: raw(a.path) });
        text = `read ok: ${r.content}`;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        text = `read refused: ${(err as Error).message}${typeof code === 'number' ? ` (${code})` : ''}`;
      }
      return update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
    }
    case 'permission': {
      const path = a.command ? null : raw(a.path ?? join(dirname(s.cwd), 'outside-the-workspace.txt'));
      const tc = id();
      const call: {
        title: string;
        kind: 'execute' | 'edit';
        locations?: { path: string }[];
        rawInput: Record<string, unknown>;
      } = a.command
        ? { title: a.command, kind: 'execute', rawInput: { command: a.command } }
        : { title: `edit ${path}`, kind: 'edit', locations: [{ path: path! }], rawInput: { filePath: path } };
      await update({ sessionUpdate: 'tool_call', toolCallId: tc, status: 'pending', ...call });
      const r: RequestPermissionResponse = await cx.request(methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: tc, ...call },
        options: [
          { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
          { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
          { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
        ],
      });
      const answer = r.outcome.outcome === 'selected' ? `selected ${r.outcome.optionId}` : r.outcome.outcome;
      const allowed = r.outcome.outcome === 'selected' && r.outcome.optionId !== 'reject';
      // What a person wrote back (the client sends it in _meta: ACP has no field for it).
      const meta = r._meta as { incrementum?: { note?: unknown } } | null | undefined;
      const note = typeof meta?.incrementum?.note === 'string' ? ` note: ${meta.incrementum.note}` : '';
      let ok = false;
      if (allowed && a.command)
        ok = childProcess().spawnSync('sh', ['-c', a.command], { cwd: s.cwd, stdio: 'ignore' }).status === 0;
      else if (allowed && path && a.content !== undefined) {
        writeFileSync(abs(a.path!), a.content);
        ok = true;
      }
      await update({
        sessionUpdate: 'tool_call_update',
        toolCallId: tc,
        status: ok ? 'completed' : 'failed',
      });
      return update({
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: `permission: ${answer}${note}` },
      });
    }
    case 'unknown_update':
      return update({ sessionUpdate: 'some_future_kind', payload: { x: 1 } });
    case 'flood':
      return flood(sessionId, s, a.count, a.update);
    case 'garbage':
      process.stdout.write(a.text + '\n');
      return;
    case 'oversized': {
      const text = 'x'.repeat(a.bytes);
      process.stdout.write(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'session/update',
          params: {
            sessionId,
            update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } },
          },
        }) + '\n',
      );
      return;
    }
    case 'crash':
      process.stderr.write(`scripted agent: crashing on purpose (exit ${a.code})\n`);
      process.exit(a.code);
    // eslint-disable-next-line no-fallthrough
    case 'hang':
      becomeStubborn();
      await new Promise(() => {});
      return;
    case 'stubborn':
      becomeStubborn();
      return;
  }
}

/**
 * `count` session/update lines written straight to stdout, a thousand at a
 * time, waiting only for the pipe to drain (through the SDK's notify, one
 * await per message, 400,000 took minutes): the client sees them as fast as
 * it can read. A cancel stops the flood between batches.
 */
async function flood(sessionId: string, s: Session, count: number, kind: 'message' | 'mixed'): Promise<void> {
  const line = (update: Record<string, unknown>) =>
    JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update } });
  const nth = (i: number): string => {
    const text = { type: 'text', text: `flood ${i} ` };
    if (kind === 'message') return line({ sessionUpdate: 'agent_message_chunk', content: text });
    const call = `flood_${Math.ceil(i / 4)}`;
    switch (i % 4) {
      case 1:
        return line({ sessionUpdate: 'agent_message_chunk', content: text });
      case 2:
        return line({ sessionUpdate: 'agent_thought_chunk', content: text });
      case 3:
        return line({
          sessionUpdate: 'tool_call',
          toolCallId: call,
          title: `read flood/${i}.txt`,
          kind: 'read',
          status: 'in_progress',
          locations: [{ path: join(s.cwd, 'flood', `${i}.txt`) }],
        });
      default:
        return line({ sessionUpdate: 'tool_call_update', toolCallId: call, status: 'completed' });
    }
  };
  for (let i = 1; i <= count;) {
    if (s.cancelled && !stubborn) return;
    const batch: string[] = [];
    for (const end = Math.min(count, i + 999); i <= end; i++) batch.push(nth(i));
    if (!process.stdout.write(batch.join('\n') + '\n'))
      await new Promise<void>((r) => process.stdout.once('drain', () => r()));
  }
}

/** The file's text, or null when there is none (gone, or never there: tests swap files under it). */
function readIfAny(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/**
 * Client-set titles (ACP's unstable session/set_title), as an agent that
 * advertises `sessionCapabilities.title` takes them. II_SCRIPTED_TITLES plays
 * other agents: "off" advertises none (every real one of AGENTS-ACP.md
 * today), "refuse" answers set_title with an error, "hang" never answers it.
 */
let titles = 'take';

const app = agent({ name: 'incrementum-scripted' })
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: false,
      // Not in the stable SDK's types yet (it is an unstable capability).
      ...(titles !== 'off' ? { sessionCapabilities: { title: {} } as Record<string, unknown> } : {}),
    },
    agentInfo: { name: 'incrementum-scripted', version: '1' },
  }))
  .onRequest(methods.agent.session.new, ({ params }) => {
    const sessionId = `scripted-${process.pid}-${sessions.size + 1}`;
    sessions.set(sessionId, { cwd: params.cwd, cancelled: false });
    return { sessionId };
  })
  .onRequest(
    'session/set_title',
    (p: unknown) => p as { sessionId?: unknown; title?: unknown },
    async ({ params }) => {
      const s = typeof params.sessionId === 'string' ? sessions.get(params.sessionId) : undefined;
      if (titles === 'off') throw RequestError.methodNotFound('session/set_title');
      if (titles === 'refuse') throw RequestError.internalError(undefined, 'no titles today');
      if (titles === 'hang') await new Promise(() => {});
      if (!s) throw new RequestError(-32002, `unknown session ${String(params.sessionId)}`);
      const title = typeof params.title === 'string' ? params.title.trim() : '';
      if (!title) throw RequestError.invalidParams({ title: params.title }, 'the title is empty');
      s.title = title;
      return { title };
    },
  )
  .onRequest(methods.agent.session.prompt, async ({ params, client: cx }) => {
    const s = sessions.get(params.sessionId);
    if (!s) throw new Error(`unknown session ${params.sessionId}`);
    s.cancelled = false;
    const text = params.prompt.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const stopReason = await run(cx, params.sessionId, s, text);
    const u = lastUsage.get(params.sessionId);
    return {
      stopReason,
      ...(u
        ? {
            usage: {
              inputTokens: u.input_tokens,
              outputTokens: u.output_tokens,
              totalTokens: u.input_tokens + u.output_tokens,
            },
          }
        : {}),
    } as { stopReason: typeof stopReason };
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    const s = sessions.get(params.sessionId);
    if (s) s.cancelled = true;
  });

function main(): void {
  ({ scenarioPath, statePath } = scenarioFiles(process.env));
  titles = process.env.II_SCRIPTED_TITLES || 'take';
  const conn = app.connect(
    ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>),
  );
  void conn.closed.then(() => {
    if (!stubborn) process.exit(0);
  });
}

// Built into a V8 startup snapshot (scripts/scripted-snapshot.mjs), this
// module is loaded once, at build time, the ACP SDK's ~490 zod schemas made
// with it, and each start only runs main(): about 30 ms of CPU made the
// schemas and 20 compiled the bundle, at every start.
if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.setDeserializeMainFunction(main);
else main();
