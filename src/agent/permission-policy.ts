// How a permission request is answered. Every request gets an answer (an
// unanswered one hangs session/prompt forever). Whatever names a path
// outside the workspace (or its `.git` and git directories: git-paths.ts) is
// rejected, always, without asking anyone. The rest is decided by [agent]
// permissions (README, "When an agent asks"):
// - "workspace": allowed;
// - "ask": sent to a person, unless [agent.allow] or an earlier
//   allow-always of the same job lets it through;
// - "ask-commands": commands (execute, or a request carrying a shell command)
//   go to a person as under "ask"; the rest is allowed.
// A request with no locations is decided by its kind: an execute is a
// command, not something "inside the workspace".
import type { PermissionMode } from '../model/config.js';
import type { NewPermissionAsk } from '../model/permission-ask.js';
import { gitPathRefusal } from './git-paths.js';
import type { WorkspaceRoot } from './workspace-path.js';

import { isObj } from '../model/obj.js';

export interface PermissionOptionLike {
  optionId: string;
  kind: string;
  name?: string;
}

export type PermissionAnswer = { outcome: 'cancelled' } | { outcome: 'selected'; optionId: string };

/**
 * What a person allowed "always" for the rest of a job: requests of the same
 * tool kind and, for a command, starting with the same first two words
 * ("npm test", "git status"; the whole command when it has one word). A
 * request with no command matches a rule with none.
 */
export interface AlwaysRule {
  kind: string | null;
  prefix: string | null;
}

/** [agent] permissions and [agent.allow], plus the job's allow-always rules (the runner keeps them across its sessions). */
export interface PermissionPolicy {
  mode: PermissionMode;
  allowCommands: readonly string[];
  allowKinds: readonly string[];
  /** Grows as a person answers allow-always (the session adds to it). */
  always: AlwaysRule[];
}

export const workspacePolicy = (): PermissionPolicy => ({
  mode: 'workspace',
  allowCommands: [],
  allowKinds: [],
  always: [],
});

/** What the policy looks at in a request. */
export interface RequestFacts {
  kind: string | null;
  command: string | null;
  /** Named paths that resolve outside the workspace. */
  outside: string[];
  /** Named paths in the workspace's .git or a git directory. */
  git: string[];
}

export type Verdict = 'allow' | 'reject' | 'ask';

/** Longest diff preview kept with a request. */
const DIFF_PREVIEW_CHARS = 4000;

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

/** The shell command a tool call carries (opencode's bash, Claude Code's Bash, Gemini's shell: rawInput.command). */
export function commandOfToolCall(toolCall: unknown): string | null {
  if (!isObj(toolCall) || !isObj(toolCall.rawInput)) return null;
  const c = toolCall.rawInput.command ?? toolCall.rawInput.cmd;
  if (typeof c === 'string') return c.trim() || null;
  if (Array.isArray(c) && c.every((x) => typeof x === 'string')) return c.join(' ').trim() || null;
  return null;
}

const kindOf = (toolCall: unknown): string | null =>
  isObj(toolCall) && typeof toolCall.kind === 'string' && toolCall.kind ? toolCall.kind : null;

/** The start of the diffs a tool call attaches, as -/+ lines under each path. */
function diffPreview(toolCall: unknown): string | null {
  if (!isObj(toolCall) || !Array.isArray(toolCall.content)) return null;
  let out = '';
  for (const c of toolCall.content) {
    if (!isObj(c) || c.type !== 'diff') continue;
    const lines = (t: unknown, sign: string) =>
      typeof t === 'string' && t ? t.split('\n').map((l) => sign + l) : [];
    out += [
      `${typeof c.path === 'string' ? c.path : '?'}:`,
      ...lines(c.oldText, '-'),
      ...lines(c.newText, '+'),
    ]
      .join('\n')
      .concat('\n');
    if (out.length > DIFF_PREVIEW_CHARS) return `${out.slice(0, DIFF_PREVIEW_CHARS)}\n…`;
  }
  return out ? out.trimEnd() : null;
}

/** The request's facts, for the policy. */
export function requestFacts(workspace: WorkspaceRoot, toolCall: unknown): RequestFacts {
  const outside: string[] = [];
  const git: string[] = [];
  for (const p of pathsOfToolCall(toolCall)) {
    const real = workspace.resolveInside(p);
    if (real === null) outside.push(p);
    else if (gitPathRefusal(workspace, real) !== null) git.push(p);
  }
  return { kind: kindOf(toolCall), command: commandOfToolCall(toolCall), outside, git };
}

/** The request as a person is shown it (and as it is stored: model/permission-ask.ts). */
export function askOf(toolCall: unknown, options: PermissionOptionLike[]): NewPermissionAsk {
  const title = isObj(toolCall) && typeof toolCall.title === 'string' ? toolCall.title : '';
  return {
    tool_kind: kindOf(toolCall),
    title,
    command: commandOfToolCall(toolCall),
    paths: pathsOfToolCall(toolCall),
    diff_preview: diffPreview(toolCall),
    options: options.map((o) => ({ id: o.optionId, name: o.name ?? o.optionId, kind: o.kind })),
  };
}

/**
 * Characters with which a shell runs more than the command it starts with
 * (`npm test; curl …`, `npm test && …`, `$(…)`, redirections): such a
 * command never matches a prefix rule and goes to a person.
 */
const SHELL_MORE = /[;&|`$<>\n\r(){}]/;

const words = (s: string) => s.trim().split(/\s+/).filter(Boolean);

/** `command` starts with the whole words of `prefix`, and runs nothing more than it says. */
export function commandMatches(command: string | null, prefix: string): boolean {
  if (command === null || SHELL_MORE.test(command)) return false;
  const c = words(command);
  const p = words(prefix);
  return p.length > 0 && p.length <= c.length && p.every((w, i) => c[i] === w);
}

/** Commands that run whatever their arguments say (`bash -c …`, `env X=1 …`, `sudo …`). */
const RUNS_ITS_ARGUMENTS = new Set(
  'bash sh zsh dash ksh fish env xargs sudo doas nice nohup timeout time exec eval command builtin watch'.split(
    ' ',
  ),
);
/** Interpreters whose options take code (`node -e`, `python -c`). */
const INTERPRETERS = new Set('node python python3 perl ruby deno bun php lua tclsh'.split(' '));

/**
 * The rule an allow-always answer to `ask` adds: its first two words, or
 * the whole command when the first word runs whatever its arguments say
 * (`bash -c "npm run lint"` must not let `bash -c "rm -rf src"` through).
 */
export function alwaysRuleFor(ask: Pick<NewPermissionAsk, 'tool_kind' | 'command'>): AlwaysRule {
  if (ask.command === null) return { kind: ask.tool_kind, prefix: null };
  const w = words(ask.command);
  const first = w[0]?.split('/').pop() ?? '';
  const whole = RUNS_ITS_ARGUMENTS.has(first) || (INTERPRETERS.has(first) && (w[1] ?? '').startsWith('-'));
  return { kind: ask.tool_kind, prefix: (whole ? w : w.slice(0, 2)).join(' ') };
}

/** What an allow-always rule covers, in words (shown before a person confirms it, and in --help). */
export function describeAlways(rule: AlwaysRule): string {
  const kind = rule.kind ?? 'requests with no kind';
  return rule.prefix === null
    ? `every ${kind} request of this job inside the workspace`
    : `every ${kind} command of this job starting with "${rule.prefix}"`;
}

const isCommand = (f: RequestFacts) => f.kind === 'execute' || (f.command !== null && f.kind !== 'edit');

/** The decision table (README, "When an agent asks"), and why, for the transcript. */
export function decide(policy: PermissionPolicy, f: RequestFacts): { verdict: Verdict; reason: string } {
  if (f.outside.length)
    return { verdict: 'reject', reason: `outside the workspace: ${f.outside.join(', ')}` };
  if (f.git.length)
    return { verdict: 'reject', reason: `the workspace's .git or a git directory: ${f.git.join(', ')}` };
  if (policy.mode === 'workspace') return { verdict: 'allow', reason: 'inside the workspace' };
  if (f.kind !== null && policy.allowKinds.includes(f.kind))
    return { verdict: 'allow', reason: `[agent.allow] kinds has ${f.kind}` };
  const prefix = isCommand(f) ? policy.allowCommands.find((p) => commandMatches(f.command, p)) : undefined;
  if (prefix !== undefined) return { verdict: 'allow', reason: `[agent.allow] commands has "${prefix}"` };
  const rule = policy.always.find(
    (r) =>
      r.kind === f.kind && (r.prefix === null ? f.command === null : commandMatches(f.command, r.prefix)),
  );
  if (rule) return { verdict: 'allow', reason: `allowed always earlier: ${describeAlways(rule)}` };
  if (policy.mode === 'ask-commands' && !isCommand(f))
    return { verdict: 'allow', reason: 'inside the workspace (not a command)' };
  return {
    verdict: 'ask',
    reason: isCommand(f) ? 'a command: a person decides' : 'permissions = "ask": a person decides',
  };
}

/** The agent's option for an allow or a reject: its once-option first (see README on allow-always), null when it offered none. */
export function optionFor(options: PermissionOptionLike[], allow: boolean): PermissionAnswer | null {
  const prefer = allow ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  for (const kind of prefer) {
    const o = options.find((x) => x.kind === kind);
    if (o) return { outcome: 'selected', optionId: o.optionId };
  }
  return null;
}

/** The policy's decision without a person: allow or reject (an `ask` verdict is not decided here). */
export function decidePermission(
  workspace: WorkspaceRoot,
  toolCall: unknown,
  options: PermissionOptionLike[],
  policy: PermissionPolicy = workspacePolicy(),
): { answer: PermissionAnswer; allowed: boolean; reason: string; verdict: Verdict } {
  const { verdict, reason } = decide(policy, requestFacts(workspace, toolCall));
  const allowed = verdict !== 'reject';
  const answer = optionFor(options, allowed);
  // No option of the wanted kind: refusing to choose is the only safe answer.
  if (!answer)
    return {
      answer: { outcome: 'cancelled' },
      allowed: false,
      reason: `${reason} (no matching option)`,
      verdict,
    };
  return { answer, allowed, reason, verdict };
}
