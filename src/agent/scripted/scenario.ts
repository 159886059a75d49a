// Scenarios for the scripted agent: a real ACP agent (main.ts) that plays back
// scripted turns, for `ii demo` and the tests.
//
// A scenario is a JSON file, named by env II_SCRIPTED_SCENARIO, holding a list
// of turns per prompt kind, used in order:
//
//   {
//     "implement":      [Turn, ...],   // templates/implement.liquid
//     "review":         [Turn, ...],   // templates/review.liquid
//     "project-review": [Turn, ...],   // templates/project-review.liquid
//     "commit-message": [Turn, ...],   // templates/commit-message.liquid
//     "auto-commit":    [Turn, ...],   // the auto-commit prompt (src/agent/auto-commit.ts)
//     "resolve-conflicts": [Turn, ...], // templates/resolve-conflicts.liquid (a landing's conflicts)
//     "other":          [Turn, ...]    // any other prompt
//   }
//
// The agent is started once per prompt (one ACP session per prompt), so its
// position in each list is kept in a state file: env II_SCRIPTED_STATE, else
// `<scenario>.state`. II_SCRIPTED_SCENARIO may instead name a folder: each
// todo then plays `<todo id>.json` (else `default.json`), its place kept in
// `<todo id>.state`, so jobs running at once never take each other's turns
// (the job runner gives every agent II_TODO_ID and II_JOB_ID).
// When a kind's list is used up, a default turn answers:
// implement changes nothing; review and project-review write ACCEPT;
// commit-message writes a short message; auto-commit commits the files the
// prompt lists with git; other does nothing.
//
//   Turn = { "actions": [Action, ...],
//            "usage"?: { "input_tokens": n, "output_tokens": n, "cost": usd } | null,
//            "stop_reason"?: "end_turn" | "max_tokens" | "refusal" | ... }
//
// usage is reported as a usage_update (cumulative cost, as claude-agent-acp
// sends it) and as `usage` on the session/prompt response (tokens, as
// opencode sends it), like real agents. A turn without usage (a default turn
// too) reports an estimate, like a real agent (estimatedUsage); "usage": null
// reports none, like an agent that never says.
//
// Actions (paths are relative to the session's cwd, or absolute; read, permission
// and fs writes send them to the client unnormalised, `..` and all):
//   {"type":"write","path","content","style"?}   create or overwrite a file
//   {"type":"edit","path","old","new","style"?}  replace the first `old` with `new`
//   {"type":"delete","path"}                     remove a file (a delete tool call)
//     style "diff" (default): tool_call {kind, locations} then a completed
//       update with a full diff block and no kind;
//     style "opencode": the messages opencode 1.18 sends (test/unit/file-tracker.test.ts): kind
//       and path on early updates, no diff block for a write, a snippet diff
//       plus rawOutput.metadata.filediff for an edit;
//     style "fs": the file is written by the client through fs/write_text_file
//       (a refusal fails the tool call and comes back as a message).
//   {"type":"message","text"}                    agent_message_chunk
//   {"type":"thought","text"}                    agent_thought_chunk
//   {"type":"plan","entries":[string]}           plan
//   {"type":"feedback","verdict":"ACCEPT"|"REQUEST_CHANGES"|"ABANDON","text"?}
//                                                writes .incrementum-feedback
//   {"type":"commit_message","text"}             writes .incrementum-commit-message
//   {"type":"shell","command"}                   runs `sh -c command` in the cwd: files
//                                                change with no edit events (like bash tools)
//   {"type":"git_commit","files"?,"message"}     git add + commit (all changes without files)
//   {"type":"delay","ms"}                        sleeps, so a dashboard can watch
//   {"type":"stderr","text"}                     writes `text` and a newline to stderr, as an agent
//                                                logs what goes wrong (a model it cannot reach)
//   {"type":"read","path"}                       fs/read_text_file through the client; the
//                                                result (or error, with its JSON-RPC code)
//                                                comes back as a message
//   {"type":"permission","path"?,"content"?}     session/request_permission for an edit of
//                                                `path` (default: a file outside the cwd); the
//                                                answer comes back as a message ("permission:
//                                                selected allow", "… note: <the client's note>");
//                                                allowed, with `content`, it writes the file
//   {"type":"permission","command"}              the same for an execute of `command` (sh -c in
//                                                the cwd), which it runs when allowed
//   {"type":"unknown_update"}                    a session/update of a kind no one knows
//   {"type":"flood","count","update"?}           `count` session/update notifications at once,
//                                                written as fast as the client reads them:
//                                                update "message" (default) sends message chunks
//                                                "flood 1 " … "flood <count> "; "mixed" cycles a
//                                                message chunk, a thought chunk, a read tool_call
//                                                and its completion (a chatty or runaway agent)
// Faults, for tests:
//   {"type":"crash","code"?}                     exits mid-turn (default code 3)
//   {"type":"garbage","text"?}                   a non-JSON line on stdout
//   {"type":"oversized","bytes"}                 one message line of about `bytes` bytes
//   {"type":"hang"}                              never answers; ignores cancel, EOF and SIGTERM
//   {"type":"stubborn"}                          from now on ignores cancel, EOF and SIGTERM
//                                                (the turn itself still ends)
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';

const Style = z.enum(['diff', 'opencode', 'fs']).default('diff');

export const Action = z.discriminatedUnion('type', [
  z.object({ type: z.literal('write'), path: z.string().min(1), content: z.string(), style: Style }),
  z.object({
    type: z.literal('edit'),
    path: z.string().min(1),
    old: z.string(),
    new: z.string(),
    style: Style,
  }),
  z.object({ type: z.literal('delete'), path: z.string().min(1) }),
  z.object({ type: z.literal('message'), text: z.string() }),
  z.object({ type: z.literal('thought'), text: z.string() }),
  z.object({ type: z.literal('plan'), entries: z.array(z.string()) }),
  z.object({
    type: z.literal('feedback'),
    verdict: z.enum(['ACCEPT', 'REQUEST_CHANGES', 'ABANDON']),
    text: z.string().default(''),
  }),
  z.object({ type: z.literal('commit_message'), text: z.string().min(1) }),
  z.object({ type: z.literal('shell'), command: z.string().min(1) }),
  z.object({
    type: z.literal('git_commit'),
    files: z.array(z.string()).optional(),
    message: z.string().min(1),
  }),
  z.object({ type: z.literal('delay'), ms: z.number().int().nonnegative() }),
  z.object({ type: z.literal('stderr'), text: z.string() }),
  z.object({ type: z.literal('read'), path: z.string().min(1) }),
  z.object({
    type: z.literal('permission'),
    path: z.string().optional(),
    command: z.string().min(1).optional(),
    content: z.string().optional(),
  }),
  z.object({ type: z.literal('unknown_update') }),
  z.object({
    type: z.literal('flood'),
    count: z.number().int().positive(),
    update: z.enum(['message', 'mixed']).default('message'),
  }),
  z.object({ type: z.literal('crash'), code: z.number().int().default(3) }),
  z.object({ type: z.literal('garbage'), text: z.string().default('this is not JSON') }),
  z.object({ type: z.literal('oversized'), bytes: z.number().int().positive() }),
  z.object({ type: z.literal('hang') }),
  z.object({ type: z.literal('stubborn') }),
]);
export type Action = z.infer<typeof Action>;

export const Turn = z.object({
  actions: z.array(Action).default([]),
  usage: z
    .object({
      input_tokens: z.number().int().nonnegative().default(0),
      output_tokens: z.number().int().nonnegative().default(0),
      cost: z.number().nonnegative().default(0),
    })
    .nullable()
    .optional(),
  stop_reason: z
    .enum(['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled'])
    .default('end_turn'),
});
export type Turn = z.infer<typeof Turn>;

export const PROMPT_KINDS = [
  'implement',
  'review',
  'project-review',
  'commit-message',
  'auto-commit',
  'resolve-conflicts',
  'other',
] as const;
export type PromptKind = (typeof PROMPT_KINDS)[number];

export const Scenario = z
  .object(
    Object.fromEntries(PROMPT_KINDS.map((k) => [k, z.array(Turn).default([])])) as Record<
      PromptKind,
      z.ZodDefault<z.ZodArray<typeof Turn>>
    >,
  )
  .strict();
export type Scenario = Record<PromptKind, Turn[]>;

/** The text that starts the auto-commit prompt; the scripted agent keys on it. */
export const AUTO_COMMIT_MARK = 'Commit the work of this iteration';

/** Which of our prompts this is, from the shipped templates' wording. */
export function promptKind(text: string): PromptKind {
  const head = text.slice(0, 400);
  if (head.includes(AUTO_COMMIT_MARK)) return 'auto-commit';
  if (head.includes('You are working on one todo')) return 'implement';
  if (head.includes('You are resolving conflicts')) return 'resolve-conflicts';
  if (head.includes('You are doing the final review')) return 'project-review';
  if (head.includes('You are reviewing a change')) return 'review';
  if (head.includes('Write its final commit message') || text.includes('.incrementum-commit-message'))
    return 'commit-message';
  return 'other';
}

export function loadScenario(path: string): Scenario {
  const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));
  return Scenario.parse(raw) as Scenario;
}

type State = Partial<Record<PromptKind, number>>;

function readState(path: string): State {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as State;
  } catch {
    return {};
  }
}

/** Takes the next turn of `kind` (advancing the state file), or null when the list is used up. */
export function nextTurn(scenario: Scenario, kind: PromptKind, statePath: string): Turn | null {
  const state = readState(statePath);
  const i = state[kind] ?? 0;
  state[kind] = i + 1;
  // Not the pid alone: in a job's sandbox every agent has the same few pids
  // (a PID namespace each), and two agents of one scenario renamed each
  // other's file away (ENOENT).
  const tmp = `${statePath}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify(state));
  renameSync(tmp, statePath);
  return scenario[kind][i] ?? null;
}

/** Prices of the estimate, dollars per million tokens (a Sonnet-class model's). */
const PRICE_IN = 3;
const PRICE_OUT = 15;

/**
 * What a turn with no scripted usage reports: about four characters a token
 * for the prompt, and for what the turn writes (at least a short answer), at
 * a real model's prices. Deterministic, so tests can count on it.
 */
export function estimatedUsage(
  prompt: string,
  actions: Action[],
): { input_tokens: number; output_tokens: number; cost: number } {
  const written = actions.reduce((n, a) => n + JSON.stringify(a).length, 0);
  const input_tokens = Math.ceil(prompt.length / 4);
  const output_tokens = 20 + Math.ceil(written / 4);
  return {
    input_tokens,
    output_tokens,
    cost: (input_tokens * PRICE_IN + output_tokens * PRICE_OUT) / 1e6,
  };
}
