// The one reading of ACP's session/update notifications: what the agent said,
// thought, which tool it called (its title and kind remembered across the
// call's updates, which carry only what changed), its plan and the cost it
// reports. The live session (acp-session.ts) and the transcript reader
// (transcript-text.ts) both parse through it, so the board's log and the
// runner never disagree on what a tool was called. Pure; the input is agent
// output, so every field is checked and anything else is ignored.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One thing a session/update said. */
export type SessionUpdate =
  | { kind: 'message'; text: string }
  | { kind: 'thought'; text: string }
  | {
      kind: 'tool';
      id: string;
      /** The call's title (from this update or an earlier one of the call), else its id. */
      title: string;
      /** pending, in_progress, completed, failed, or '' when an update does not say. */
      status: string;
      toolKind?: string;
      /** A tool_call (the agent announcing the call), not a tool_call_update. */
      announced: boolean;
    }
  | { kind: 'plan'; entries: string[] }
  /** The session's cost so far, in dollars, as the agent counts it (claude-agent-acp's usage_update). */
  | { kind: 'cost'; amount: number };

/** The text of an ACP content block (or a list of them, or a tool call's content wrapper). */
export function contentText(content: unknown): string {
  if (Array.isArray(content)) return content.map(contentText).join('');
  if (!isObj(content)) return typeof content === 'string' ? content : '';
  if (typeof content.text === 'string') return content.text;
  if (isObj(content.content)) return contentText(content.content);
  return '';
}

/** Tool calls whose title and kind are remembered while open; a flood of ones never ended loses its oldest. */
export const MAX_OPEN_TOOLS = 4096;

/**
 * Reads one session's updates in order. It keeps the open tool calls'
 * titles and kinds, so use one per session (or transcript).
 */
export class SessionUpdateParser {
  private tools = new Map<string, { title: string; kind?: string }>();

  /** What a session/update's params say, or null when nothing we use. */
  parse(params: unknown): SessionUpdate | null {
    const u = isObj(params) ? params.update : undefined;
    if (!isObj(u)) return null;
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk': {
        const text = contentText(u.content);
        if (!text) return null;
        return { kind: u.sessionUpdate === 'agent_message_chunk' ? 'message' : 'thought', text };
      }
      case 'tool_call':
      case 'tool_call_update': {
        const id =
          typeof u.toolCallId === 'string'
            ? u.toolCallId
            : typeof u.toolCallId === 'number'
              ? String(u.toolCallId)
              : '';
        const known = this.tools.get(id) ?? { title: '' };
        if (typeof u.title === 'string' && u.title) known.title = u.title;
        if (typeof u.kind === 'string' && u.kind) known.kind = u.kind;
        this.tools.delete(id); // re-inserted last: the oldest open call is the first to go
        this.tools.set(id, known);
        if (this.tools.size > MAX_OPEN_TOOLS) this.tools.delete(this.tools.keys().next().value!);
        const announced = u.sessionUpdate === 'tool_call';
        const status = typeof u.status === 'string' ? u.status : announced ? 'pending' : '';
        if (status === 'completed' || status === 'failed') this.tools.delete(id);
        return {
          kind: 'tool',
          id,
          title: known.title || id,
          status,
          ...(known.kind ? { toolKind: known.kind } : {}),
          announced,
        };
      }
      case 'plan':
        return Array.isArray(u.entries)
          ? { kind: 'plan', entries: u.entries.map((e) => (isObj(e) ? String(e.content ?? '') : String(e))) }
          : null;
      case 'usage_update': {
        // claude-agent-acp: {used, size, cost: {amount, currency}}, the cost cumulative.
        const amount = isObj(u.cost) ? u.cost.amount : undefined;
        return typeof amount === 'number' && Number.isFinite(amount) && amount >= 0
          ? { kind: 'cost', amount }
          : null;
      }
      default:
        // Other kinds (modes, commands, user echoes, ones newer than us) carry nothing we use.
        return null;
    }
  }
}
