// How a permission request is answered. Every request gets an answer (an
// unanswered one hangs session/prompt forever): allow when everything it
// names lies inside the workspace (its `.git` and git directories aside:
// git-paths.ts), reject otherwise.
import { gitPathRefusal } from './git-paths.js';
import type { WorkspaceRoot } from './workspace-path.js';

import { isObj } from '../model/obj.js';

export interface PermissionOptionLike {
  optionId: string;
  kind: string;
  name?: string;
}

export type PermissionAnswer = { outcome: 'cancelled' } | { outcome: 'selected'; optionId: string };

/** The file paths a permission request's tool call names, wherever the agent put them. */
export function pathsOfToolCall(toolCall: unknown): string[] {
  if (!isObj(toolCall)) return [];
  const out: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string' && v) out.push(v);
  };
  if (Array.isArray(toolCall.locations)) for (const l of toolCall.locations) if (isObj(l)) add(l.path);
  if (Array.isArray(toolCall.content))
    for (const c of toolCall.content) if (isObj(c) && c.type === 'diff') add(c.path);
  const input = toolCall.rawInput;
  if (isObj(input))
    for (const k of ['filePath', 'file_path', 'path', 'abs_path', 'absolute_path', 'notebook_path'])
      add(input[k]);
  return [...new Set(out)];
}

/** The policy's decision, and why (for the transcript). */
export function decidePermission(
  workspace: WorkspaceRoot,
  toolCall: unknown,
  options: PermissionOptionLike[],
): { answer: PermissionAnswer; allowed: boolean; reason: string } {
  const outside: string[] = [];
  const git: string[] = [];
  for (const p of pathsOfToolCall(toolCall)) {
    const real = workspace.resolveInside(p);
    if (real === null) outside.push(p);
    else if (gitPathRefusal(workspace, real) !== null) git.push(p);
  }
  const allowed = outside.length === 0 && git.length === 0;
  const prefer = allowed ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  const reason = allowed
    ? 'inside the workspace'
    : outside.length
      ? `outside the workspace: ${outside.join(', ')}`
      : `the workspace's .git or a git directory: ${git.join(', ')}`;
  for (const kind of prefer) {
    const o = options.find((x) => x.kind === kind);
    if (o) return { answer: { outcome: 'selected', optionId: o.optionId }, allowed, reason };
  }
  // No option of the wanted kind: refusing to choose is the only safe answer.
  return { answer: { outcome: 'cancelled' }, allowed: false, reason: `${reason} (no matching option)` };
}
