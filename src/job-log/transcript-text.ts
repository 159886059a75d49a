// A readable rendering of an agent transcript (JSONL of every ACP message both
// ways) for `ii job logs`: the prompt, the agent's message text, tool calls
// and their outcome, plans, usage and the turn's end. Pure. Its session/updates
// are read by the live session's parser (src/agent/session-update.ts).
import { contentText, SessionUpdateParser } from '../agent/session-update.js';

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

/** Renders the parsed entries of one transcript as lines of text (taken one at a time: a whole file need not be held). */
export function transcriptText(entries: Iterable<unknown>): string[] {
  const out: string[] = [];
  let message = '';
  let thought = '';
  const updates = new SessionUpdateParser();
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
      const prompt = contentText(params.prompt);
      out.push(
        '> prompt:',
        ...prompt
          .trimEnd()
          .split('\n')
          .map((l) => `>   ${l}`),
      );
      continue;
    }
    if (m.method === 'session/update') {
      const u = updates.parse(params);
      if (u?.kind === 'message') message += u.text;
      else if (u?.kind === 'thought') thought += u.text;
      else if (u?.kind === 'tool') {
        // A call once when announced and once when it ends; its progress in between is not news.
        if (u.announced || u.status === 'completed' || u.status === 'failed') {
          flush();
          out.push(`  [${u.toolKind || 'tool'}] ${u.title}${u.status ? ` (${u.status})` : ''}`);
        }
      } else if (u?.kind === 'plan') {
        flush();
        out.push('  plan:', ...u.entries.map((e) => `    - ${e}`));
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
