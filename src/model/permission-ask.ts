// A permission request an agent made that the policy sent to a person
// ([agent] permissions = "ask" / "ask-commands"), and how it ended. The
// runner stores it when the agent asks; `ii job answer` (or the board)
// answers it through the store, and the runner, in another process, picks
// the answer up and replies to the agent. Every text here came from the
// agent: hostile, shown only through src/text.
import { z } from 'zod';
import { ASK_ANSWERS, ASK_OUTCOMES } from './enums.js';

export { ASK_ANSWERS, ASK_OUTCOMES } from './enums.js';
export { isWaiting, waitText } from './waiting.js';

/** What a person can answer (ASK_ANSWERS). */
export const AskAnswer = z.enum(ASK_ANSWERS);
export type AskAnswer = z.infer<typeof AskAnswer>;

/** How a request ended (ASK_OUTCOMES); null while it is open. */
export const AskOutcome = z.enum(ASK_OUTCOMES);
export type AskOutcome = z.infer<typeof AskOutcome>;

/** One option the agent offered (ACP PermissionOption): its id, its label, its kind (allow_once, reject_always, …). */
export const AskOption = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
});
export type AskOption = z.infer<typeof AskOption>;

export const PermissionAsk = z.object({
  /** The stored row's id. */
  id: z.number().int(),
  job_id: z.string(),
  /** The ACP ToolKind the agent gave (execute, edit, read, …), null when it gave none. */
  tool_kind: z.string().nullable().default(null),
  /** The tool call's title as the agent sent it. */
  title: z.string().default(''),
  /** The shell command, for an execute request that names one. */
  command: z.string().nullable().default(null),
  /** The paths the request names, as the agent wrote them. */
  paths: z.array(z.string()).default([]),
  /** The start of a diff the agent attached (an edit), capped. */
  diff_preview: z.string().nullable().default(null),
  options: z.array(AskOption).default([]),
  asked_at: z.string(),
  answered_at: z.string().nullable().default(null),
  outcome: AskOutcome.nullable().default(null),
  /** A person's note (sent back to the agent with a rejection), or why it timed out / was cancelled. */
  note: z.string().nullable().default(null),
  /** How long it waited for its answer, once it has one. */
  waited_ms: z.number().int().nonnegative().nullable().default(null),
});
export type PermissionAsk = z.infer<typeof PermissionAsk>;

/** What the runner stores when a request goes to a person. */
export type NewPermissionAsk = Pick<
  PermissionAsk,
  'tool_kind' | 'title' | 'command' | 'paths' | 'diff_preview' | 'options'
>;
