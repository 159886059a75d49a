// The real opencode for the end-to-end test, offline: a pinned opencode-ai
// installed once into a cache folder (it weighs ~350 MB, so it is no
// dependency of ours), and a local OpenAI-compatible model server that
// answers with scripted tool calls (AGENTS-ACP.md, "Running a real agent offline").
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promptKind, type PromptKind } from '../../src/agent/scripted/scenario.js';
import { ROOT } from './cli.js';

export const OPENCODE_VERSION = '1.18.33';
const CACHE = process.env.II_TEST_CACHE || join(ROOT, 'node_modules', '.cache', 'incrementum-test');

/** The opencode binary, installing it into the cache when missing; null (and why) when that fails. */
export function ensureOpencode(): { bin: string } | { error: string } {
  const prefix = join(CACHE, `opencode-ai-${OPENCODE_VERSION}`);
  const bin = join(prefix, 'node_modules', '.bin', 'opencode');
  if (existsSync(bin)) return { bin };
  mkdirSync(prefix, { recursive: true });
  const r = spawnSync(
    'npm',
    [
      'install',
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--prefix',
      prefix,
      `opencode-ai@${OPENCODE_VERSION}`,
    ],
    { encoding: 'utf8', timeout: 300_000 },
  );
  if (r.status !== 0 || !existsSync(bin))
    return {
      error: `npm install opencode-ai@${OPENCODE_VERSION} failed: ${(r.stderr || String(r.error)).slice(-500)}`,
    };
  return { bin };
}

export type Step = { tool: string; args: Record<string, unknown> } | { text: string };

/** Streams one chat-completions answer: the step as a tool call or as text, then usage. */
function answer(res: ServerResponse, step: Step, callId: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
  const chunk = (delta: unknown, finish: string | null = null) =>
    send({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'scripted',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  if ('tool' in step) {
    chunk({
      role: 'assistant',
      tool_calls: [
        {
          index: 0,
          id: callId,
          type: 'function',
          function: { name: step.tool, arguments: JSON.stringify(step.args) },
        },
      ],
    });
    chunk({}, 'tool_calls');
  } else {
    chunk({ role: 'assistant', content: step.text });
    chunk({}, 'stop');
  }
  send({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'scripted',
    choices: [],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  });
  res.end('data: [DONE]\n\n');
}

interface ChatRequest {
  tools?: unknown[];
  messages: { role: string; content?: unknown }[];
}

/** The text of a message's content, a string or a list of parts. */
const contentText = (c: unknown): string =>
  typeof c === 'string'
    ? c
    : Array.isArray(c)
      ? c
          .map((p) =>
            typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '',
          )
          .join('\n')
      : '';

export interface ModelServer {
  url: string;
  readonly requests: number;
  close: () => Promise<void>;
}

/** A chat-completions server on 127.0.0.1; `pick` chooses the step for each request. */
async function modelServer(pick: (j: ChatRequest) => Step): Promise<ModelServer> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (!req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end();
        return;
      }
      state.requests++;
      const j = JSON.parse(body) as ChatRequest;
      const done = j.messages.filter((m) => m.role === 'tool').length;
      answer(res, pick(j), `call_${state.requests}_${done}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const withTools = (j: ChatRequest) => Array.isArray(j.tools) && j.tools.length > 0;
const toolResults = (j: ChatRequest) => j.messages.filter((m) => m.role === 'tool').length;

/**
 * A chat-completions server: the n-th request of the agent's main loop (one
 * with tools) gets step n (counted by tool results so far); requests without
 * tools (title generation) get plain text.
 */
export function scriptedModel(steps: Step[]): Promise<ModelServer> {
  return modelServer((j) =>
    withTools(j) ? (steps[toolResults(j)] ?? { text: 'Done.' }) : { text: 'A scripted title' },
  );
}

/**
 * A model server for whole jobs: one opencode session per prompt, so each
 * prompt kind (implement, review, ... told apart by our templates' wording)
 * has a list of sessions, used in order, and each session a list of steps
 * (step n answers the request after n tool results). `$WS` in a string
 * argument becomes the workspace the prompt names. A session with no script
 * left answers "Done." and changes nothing.
 */
export async function jobModel(
  script: Partial<Record<PromptKind, Step[][]>>,
): Promise<ModelServer & { sessions: Partial<Record<PromptKind, number>> }> {
  const sessions: Partial<Record<PromptKind, number>> = {};
  const current: Partial<Record<PromptKind, Step[]>> = {};
  const server = await modelServer((j) => {
    if (!withTools(j)) return { text: 'A scripted title' };
    const user = j.messages.filter((m) => m.role === 'user').map((m) => contentText(m.content));
    const prompt = user.find((t) => promptKind(t) !== 'other') ?? user.join('\n');
    const kind = promptKind(prompt);
    const done = toolResults(j);
    if (done === 0) {
      // A new session of this kind (sessions run one after another).
      const n = sessions[kind] ?? 0;
      sessions[kind] = n + 1;
      current[kind] = script[kind]?.[n] ?? [];
    }
    const step = current[kind]?.[done] ?? { text: 'Done.' };
    const ws = /git workspace at (\/[^\s:]+?)\.?(?:\s|:|$)/.exec(prompt)?.[1] ?? '';
    return 'tool' in step ? { tool: step.tool, args: substitute(step.args, ws) } : step;
  });
  return Object.assign(server, { sessions });
}

function substitute(args: Record<string, unknown>, ws: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([k, v]) => [k, typeof v === 'string' ? v.replaceAll('$WS', ws) : v]),
  );
}

/** opencode's user config pointing it at the scripted model, with edits allowed. */
export function opencodeConfig(baseURL: string): string {
  return JSON.stringify({
    provider: {
      mock: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Mock',
        options: { baseURL, apiKey: 'x' },
        models: { scripted: { name: 'Scripted', tool_call: true } },
      },
    },
    model: 'mock/scripted',
    permission: { edit: 'allow', bash: 'allow' },
    autoupdate: false,
    share: 'disabled',
  });
}

/**
 * A private home for opencode under `dir`, configured for the model at
 * `baseURL`; returns the environment that points opencode at it (and keeps
 * it from updating itself).
 */
export function opencodeHome(dir: string, baseURL: string): Record<string, string> {
  const config = join(dir, '.config');
  mkdirSync(join(config, 'opencode'), { recursive: true });
  writeFileSync(join(config, 'opencode', 'opencode.json'), opencodeConfig(baseURL));
  return {
    HOME: dir,
    XDG_CONFIG_HOME: config,
    XDG_DATA_HOME: join(dir, '.local', 'share'),
    XDG_STATE_HOME: join(dir, '.local', 'state'),
    XDG_CACHE_HOME: join(dir, '.cache'),
    OPENCODE_DISABLE_AUTOUPDATE: '1',
  };
}
