// The real opencode for the end-to-end test, offline: a pinned opencode-ai
// installed once into a cache folder (it weighs ~350 MB, so it is no
// dependency of ours), and a local OpenAI-compatible model server that
// answers with scripted tool calls (AGENTS-ACP.md, "Running a real agent offline").
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
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

/**
 * A chat-completions server: the n-th request of the agent's main loop (one
 * with tools) gets step n (counted by tool results so far); requests without
 * tools (title generation) get plain text.
 */
export async function scriptedModel(
  steps: Step[],
): Promise<{ url: string; requests: number; close: () => Promise<void> }> {
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
      const j = JSON.parse(body) as { tools?: unknown[]; messages: { role: string }[] };
      const withTools = Array.isArray(j.tools) && j.tools.length > 0;
      const done = j.messages.filter((m) => m.role === 'tool').length;
      const step: Step = withTools ? (steps[done] ?? { text: 'Done.' }) : { text: 'A scripted title' };
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
              id: `call_${done}`,
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
