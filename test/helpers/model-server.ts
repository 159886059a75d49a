// A scripted model on 127.0.0.1 that real agents talk to instead of their
// provider, so they run offline and really edit files through their own tools
// (test/e2e/opencode.test.ts drives opencode so). One server speaks one wire:
// OpenAI chat completions (opencode), the Gemini API (gemini-cli) or the
// Anthropic Messages API (Claude Code), each streamed as the agent asks.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promptKind, type PromptKind } from '../../src/agent/scripted/scenario.js';

export type Step = { tool: string; args: Record<string, unknown> } | { text: string };

type Json = Record<string, unknown>;
const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** How one provider's API looks to the scripted model. */
interface Wire {
  /** The URL of the model server as the agent is told it. */
  base: (origin: string) => string;
  /** An answer to a request that is no model call (token counts), or null. */
  aside: (url: string) => Json | null;
  /** A turn of the agent's main loop (it offers tools), not a side request (titles, routing). */
  main: (j: Json) => boolean;
  /** The user's texts, one per part, so the prompt is one of them. */
  texts: (j: Json) => string[];
  /** How many tool results the conversation holds: which step comes next. */
  results: (j: Json) => number;
  /** What a side request gets. */
  side: Step;
  /** Sends `step` as the model's answer. */
  answer: (res: ServerResponse, step: Step, j: Json, url: string, id: string) => void;
}

const sse = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });
const json = (res: ServerResponse, o: unknown) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(o));

/** OpenAI chat completions, streamed as chat.completion.chunk events (opencode). */
const openai: Wire = {
  base: (o) => `${o}/v1`,
  aside: () => null,
  main: (j) => list(j.tools).length > 0,
  texts: (j) =>
    list(j.messages)
      .filter((m) => m.role === 'user')
      .flatMap((m) =>
        typeof m.content === 'string' ? [m.content] : list(m.content).map((p) => str(p.text)),
      ),
  results: (j) => list(j.messages).filter((m) => m.role === 'tool').length,
  side: { text: 'A scripted title' },
  answer: (res, step, _j, _url, id) => {
    sse(res);
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
            id,
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
  },
};

/** The Gemini API: streamGenerateContent with alt=sse, and generateContent for side requests (gemini-cli). */
const gemini: Wire = {
  base: (o) => o,
  aside: (url) => (url.includes(':countTokens') ? { totalTokens: 100 } : null),
  main: (j) => list(j.tools).some((t) => list(t.functionDeclarations).length > 0),
  texts: (j) =>
    list(j.contents)
      .filter((c) => c.role === 'user')
      .flatMap((c) => list(c.parts).map((p) => str(p.text))),
  results: (j) =>
    list(j.contents)
      .flatMap((c) => list(c.parts))
      .filter((p) => p.functionResponse).length,
  // Its side requests (model routing, "who speaks next") want JSON; this one
  // says the user speaks next, and routing falls back to the default model.
  side: { text: '{"reasoning": "scripted", "next_speaker": "user"}' },
  answer: (res, step, _j, url) => {
    const part =
      'tool' in step ? { functionCall: { name: step.tool, args: step.args } } : { text: step.text };
    const body = {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    };
    if (!url.includes('alt=sse')) return json(res, body);
    sse(res);
    res.end(`data: ${JSON.stringify(body)}\r\n\r\n`);
  },
};

/** The Anthropic Messages API, streamed as message_start / content_block_* / message_delta events (Claude Code). */
const anthropic: Wire = {
  base: (o) => o,
  aside: (url) => (url.includes('/count_tokens') ? { input_tokens: 100 } : null),
  main: (j) => list(j.tools).length > 0,
  texts: (j) =>
    list(j.messages)
      .filter((m) => m.role === 'user')
      .flatMap((m) =>
        typeof m.content === 'string'
          ? [m.content]
          : list(m.content)
              .filter((b) => b.type === 'text')
              .map((b) => str(b.text)),
      ),
  results: (j) =>
    list(j.messages)
      .flatMap((m) => list(m.content))
      .filter((b) => b.type === 'tool_result').length,
  // Its side request names the session, as JSON.
  side: { text: '{"title": "Scripted session"}' },
  answer: (res, step, j, _url, id) => {
    const block =
      'tool' in step
        ? { type: 'tool_use', id: `toolu_${id}`, name: step.tool, input: step.args }
        : { type: 'text', text: step.text };
    const stop = 'tool' in step ? 'tool_use' : 'end_turn';
    const message = {
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      model: str(j.model) || 'scripted',
      content: [] as unknown[],
      stop_reason: null as string | null,
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 1 },
    };
    if (j.stream !== true)
      return json(res, {
        ...message,
        content: [block],
        stop_reason: stop,
        usage: { input_tokens: 100, output_tokens: 10 },
      });
    sse(res);
    const event = (type: string, data: Json) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', { message });
    if ('tool' in step) {
      event('content_block_start', { index: 0, content_block: { ...block, input: {} } });
      event('content_block_delta', {
        index: 0,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(step.args) },
      });
    } else {
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: step.text } });
    }
    event('content_block_stop', { index: 0 });
    event('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 10 },
    });
    event('message_stop', {});
    res.end();
  },
};

export const WIRES = { openai, gemini, anthropic };
export type WireName = keyof typeof WIRES;

export interface ModelServer {
  /** The base URL to give the agent. */
  url: string;
  /** Requests of the agent's main loop so far. */
  readonly requests: number;
  close: () => Promise<void>;
}

const body = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let s = '';
    req.on('data', (c: Buffer) => (s += c.toString()));
    req.on('end', () => resolve(s));
  });

/** A model server for `wire`; `pick` chooses the step for each request of the main loop. */
async function modelServer(wire: Wire, pick: (j: Json) => Step): Promise<ModelServer> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    void body(req).then((text) => {
      const url = req.url ?? '';
      const aside = wire.aside(url);
      if (aside) return json(res, aside);
      let j: Json;
      try {
        j = JSON.parse(text) as Json;
      } catch {
        res.writeHead(404).end();
        return;
      }
      if (!wire.main(j)) return wire.answer(res, wire.side, j, url, 'side');
      state.requests++;
      wire.answer(res, pick(j), j, url, `${state.requests}_${wire.results(j)}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: wire.base(`http://127.0.0.1:${port}`),
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A model whose main loop gets step n after n tool results, then "Done.". */
export function scriptedModel(wire: WireName, steps: Step[]): Promise<ModelServer> {
  const w = WIRES[wire];
  return modelServer(w, (j) => steps[w.results(j)] ?? { text: 'Done.' });
}

/**
 * A model for whole jobs: one agent session per prompt, so each prompt kind
 * (implement, review, ... told apart by our templates' wording) has a list of
 * sessions, used in order, and each session a list of steps (step n answers
 * the request after n tool results). `$WS` in a string argument becomes the
 * workspace the prompt names. A session with no script left answers "Done."
 * and changes nothing.
 */
export async function jobModel(
  wire: WireName,
  script: Partial<Record<PromptKind, Step[][]>>,
): Promise<ModelServer & { sessions: Partial<Record<PromptKind, number>> }> {
  const w = WIRES[wire];
  const sessions: Partial<Record<PromptKind, number>> = {};
  const current: Partial<Record<PromptKind, Step[]>> = {};
  const server = await modelServer(w, (j) => {
    const texts = w.texts(j);
    const prompt = texts.find((t) => promptKind(t) !== 'other') ?? texts.join('\n');
    const kind = promptKind(prompt);
    const done = w.results(j);
    if (done === 0) {
      // A new session of this kind (sessions run one after another).
      const n = sessions[kind] ?? 0;
      sessions[kind] = n + 1;
      current[kind] = script[kind]?.[n] ?? [];
    }
    const step = current[kind]?.[done] ?? { text: 'Done.' };
    const ws = /git\s+workspace at (\/[^\s:]+?)\.?(?:\s|:|$)/.exec(prompt)?.[1] ?? '';
    return 'tool' in step ? { tool: step.tool, args: substitute(step.args, ws) } : step;
  });
  return Object.assign(server, { sessions });
}

function substitute(args: Record<string, unknown>, ws: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([k, v]) => [k, typeof v === 'string' ? v.replaceAll('$WS', ws) : v]),
  );
}
