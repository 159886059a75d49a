// A readable rendering of an agent transcript (JSONL of every ACP message both
// ways) for `ii job logs`: the prompt, the agent's message text, tool calls
// and their outcome, plans, usage and the turn's end. Pure.

import { isObj, type Obj } from '../model/obj.js';

/** The JSON-RPC message inside a transcript entry, whatever envelope the recorder used. */
export function rpcOf(entry: unknown): Obj | null {
  if (!isObj(entry)) return null;
  if ('jsonrpc' in entry || 'method' in entry || ('id' in entry && ('result' in entry || 'error' in entry)))
    return entry;
  for (const k of ['message', 'msg', 'data', 'payload', 'rpc']) {
    const v = entry[k];
    if (isObj(v) && ('jsonrpc' in v || 'method' in v || 'result' in v || 'error' in v)) return v;
  }
  return null;
}

function textOf(content: unknown): string {
  if (Array.isArray(content)) return content.map(textOf).join('');
  if (!isObj(content)) return typeof content === 'string' ? content : '';
  if (typeof content.text === 'string') return content.text;
  if (isObj(content.content)) return textOf(content.content);
  return '';
}

/** Renders the parsed entries of one transcript as lines of text (taken one at a time: a whole file need not be held). */
export function transcriptText(entries: Iterable<unknown>): string[] {
  const out: string[] = [];
  let message = '';
  let thought = '';
  const tools = new Map<string, { title: string; kind: string }>();
  const flush = () => {
    if (thought.trim())
      out.push(
        ...thought
          .trim()
          .split('\n')
          .map((l) => `  (thinking) ${l}`),
      );
    if (message.trim())
      out.push(
        ...message
          .trim()
          .split('\n')
          .map((l) => `  ${l}`),
      );
    message = '';
    thought = '';
  };
  for (const entry of entries) {
    if (
      isObj(entry) &&
      (entry.type === 'warning' || entry.kind === 'warning') &&
      typeof entry.message === 'string'
    ) {
      flush();
      out.push(`  ! ${entry.message}`);
      continue;
    }
    // A line of the agent's own log (its stderr): what it says when it says nothing over ACP.
    if (isObj(entry) && entry.type === 'stderr' && typeof entry.message === 'string') {
      flush();
      out.push(`  stderr: ${entry.message}`);
      continue;
    }
    const m = rpcOf(entry);
    if (!m) continue;
    const params = isObj(m.params) ? m.params : {};
    if (m.method === 'session/prompt') {
      flush();
      const prompt = textOf(params.prompt);
      out.push(
        '> prompt:',
        ...prompt
          .trimEnd()
          .split('\n')
          .map((l) => `>   ${l}`),
      );
      continue;
    }
    if (m.method === 'session/update' && isObj(params.update)) {
      const u = params.update;
      const kind = u.sessionUpdate;
      if (kind === 'agent_message_chunk') message += textOf(u.content);
      else if (kind === 'agent_thought_chunk') thought += textOf(u.content);
      else if (kind === 'tool_call' || kind === 'tool_call_update') {
        const id = String(u.toolCallId ?? '');
        const known = tools.get(id) ?? { title: '', kind: '' };
        if (typeof u.title === 'string' && u.title) known.title = u.title;
        if (typeof u.kind === 'string') known.kind = u.kind;
        tools.set(id, known);
        const status = typeof u.status === 'string' ? u.status : kind === 'tool_call' ? 'pending' : '';
        if (status === 'completed' || status === 'failed' || kind === 'tool_call') {
          flush();
          out.push(`  [${known.kind || 'tool'}] ${known.title || id}${status ? ` (${status})` : ''}`);
        }
      } else if (kind === 'plan' && Array.isArray(u.entries)) {
        flush();
        out.push(
          '  plan:',
          ...u.entries.map((e) => `    - ${isObj(e) ? String(e.content ?? '') : String(e)}`),
        );
      }
      continue;
    }
    if (m.method === 'session/request_permission') {
      flush();
      const tc = isObj(params.toolCall) ? params.toolCall : {};
      out.push(`  permission asked: ${String(tc.title ?? tc.toolCallId ?? '')}`);
      continue;
    }
    if (m.method === 'session/cancel') {
      flush();
      out.push('  (cancelled by incrementum)');
      continue;
    }
    if (isObj(m.result) && typeof m.result.stopReason === 'string') {
      flush();
      out.push(`  (turn ended: ${m.result.stopReason})`);
      continue;
    }
    if (isObj(m.error)) {
      flush();
      out.push(`  ! error: ${String(m.error.message ?? JSON.stringify(m.error))}`);
    }
  }
  flush();
  return out;
}

/**
 * Since when the agent has said nothing while its turn goes on: the time of
 * the transcript's last entry (ours, as a prompt, or its own), or null when
 * its turn has ended (the runner works on then, not the agent) or nothing
 * is known.
 */
export function quietSince(entries: readonly unknown[]): number | null {
  const last = entries.at(-1);
  if (!isObj(last) || typeof last.t !== 'number') return null;
  const m = rpcOf(last);
  if (m && isObj(m.result) && typeof m.result.stopReason === 'string') return null;
  return last.t;
}
