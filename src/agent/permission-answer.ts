// The client's answer to session/request_permission: the policy decides
// (permission-policy.ts), or a person through the runner (askPerson). Kept
// apart from acp-session.ts, which calls it with what it needs.
import type { RequestPermissionResponse } from '@agentclientprotocol/sdk';
import { waitText } from '../model/permission-ask.js';
import {
  alwaysRuleFor,
  askOf,
  decide,
  describeAlways,
  optionFor,
  requestFacts,
  workspacePolicy,
  type PermissionOptionLike,
  type PermissionPolicy,
} from './permission-policy.js';
import type { AskPerson, AskReply } from './types.js';
import type { WorkspaceRoot } from './workspace-path.js';

export interface PermissionContext {
  ws: WorkspaceRoot;
  policy: PermissionPolicy | undefined;
  askPerson: AskPerson | undefined;
  /** A line in the transcript. */
  note(message: string): void;
  /** A warning on the live pane. */
  warn(message: string): void;
  /** The turn was cancelled (ACP: every request is then answered `cancelled`). */
  cancelled(): boolean;
  /**
   * A person is being asked: the turn's timeout stops while they think (the
   * returned function starts it again), and `signal` aborts on cancel/close.
   */
  waiting(): { signal: AbortSignal; done(): void };
}

const CANCELLED = { outcome: { outcome: 'cancelled' as const } };

/** The note rides in `_meta` (ACP has no field for it): agents that do not read it still get the outcome. */
const withNote = (r: RequestPermissionResponse, note: string | null): RequestPermissionResponse =>
  note ? { ...r, _meta: { incrementum: { note } } } : r;

export async function answerPermission(
  c: PermissionContext,
  toolCall: unknown,
  options: PermissionOptionLike[],
): Promise<RequestPermissionResponse> {
  if (c.cancelled()) return CANCELLED;
  const policy = c.policy ?? workspacePolicy();
  const d = decide(policy, requestFacts(c.ws, toolCall));
  if (d.verdict !== 'ask' || !c.askPerson) {
    const allowed = d.verdict !== 'reject';
    const answer = optionFor(options, allowed);
    // No option of the wanted kind: refusing to choose is the only safe answer.
    if (!answer) {
      c.note(`permission rejected: ${d.reason} (no matching option)`);
      return CANCELLED;
    }
    c.note(`permission ${allowed ? 'allowed' : 'rejected'}: ${d.reason}`);
    if (!allowed) c.warn(`refused the agent a permission: ${d.reason}`);
    return { outcome: answer };
  }
  const ask = askOf(toolCall, options);
  c.note(`permission: waiting for a person (${d.reason}): ${ask.command ?? ask.title}`);
  const w = c.waiting();
  let reply: AskReply;
  const started = Date.now();
  try {
    reply = await c.askPerson(ask, w.signal);
  } catch (err) {
    // The store failed under the wait: nobody can answer, so nothing runs.
    reply = { outcome: 'reject', note: null };
    c.warn(`could not ask a person, so the request was rejected: ${(err as Error).message}`);
  } finally {
    w.done();
  }
  if (reply.outcome === 'cancelled' || c.cancelled()) {
    c.note('permission cancelled: the turn ended while a person was asked');
    return CANCELLED;
  }
  const allow = reply.outcome === 'allow' || reply.outcome === 'allow-always';
  if (reply.outcome === 'allow-always') {
    const rule = alwaysRuleFor(ask);
    policy.always.push(rule);
    c.note(`permission: from now on allowed without asking: ${describeAlways(rule)}`);
  }
  const waited = waitText(Date.now() - started);
  c.note(
    reply.outcome === 'timeout'
      ? `permission rejected: no answer within ${waited} ([agent] ask-timeout)`
      : `permission ${allow ? 'allowed' : 'rejected'} by a person (${reply.outcome}) after ${waited}${reply.note ? `: ${reply.note}` : ''}`,
  );
  // Allowed "always" is kept here, for the job, and the agent is told once:
  // an agent's own "always" can change its settings, and one agent fails on
  // it in a folder it does not trust.
  const answer = optionFor(options, allow);
  if (!answer) {
    c.note('permission: the agent offered no option for that answer: cancelled');
    return CANCELLED;
  }
  return withNote({ outcome: answer }, reply.note);
}
