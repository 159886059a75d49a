// A permission request an agent made that the policy sent to a person
// ([agent] permissions = "ask" / "ask-commands"), and how it ended. The
// runner stores it when the agent asks; `ii job answer` (or the board)
// answers it through the store, and the runner, in another process, picks
// the answer up and replies to the agent. Every text here came from the
// agent: hostile, shown only through src/text.
import { z } from 'zod';

/** What a person can answer. */
export const ASK_ANSWERS = ['allow', 'allow-always', 'reject'] as const;
export const AskAnswer = z.enum(ASK_ANSWERS);
export type AskAnswer = z.infer<typeof AskAnswer>;

/**
 * How a request ended: a person's answer, `timeout` ([agent] ask-timeout
 * passed: rejected) or `cancelled` (the job was abandoned or its turn ended
 * while it waited). null while it is open.
 */
export const ASK_OUTCOMES = [...ASK_ANSWERS, 'timeout', 'cancelled'] as const;
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

/** An active job with an open request waits for a person (`waiting` in ii job list, Needs you on the board). */
export const isWaiting = (job: { status: string; asking: unknown }): boolean =>
  job.status === 'active' && job.asking != null;

/** A wait for people: "12s", "4 min", "1 h 05 min". */
export function waitText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
