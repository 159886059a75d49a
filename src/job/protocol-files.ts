// The two files an agent leaves for the runner: `.incrementum-feedback` (a
// review verdict) and `.incrementum-commit-message`. Looked for in the
// workspace root, then the repo root (an agent that got its cwd wrong); both
// are deleted before each stage, so a stale file never counts, and after
// reading.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ReviewOutcome } from '../model/job.js';
import { PROTOCOL_FILES } from '../vcs/vcs.js';

export const FEEDBACK_FILE = PROTOCOL_FILES[0];
export const COMMIT_MESSAGE_FILE = PROTOCOL_FILES[1];
export type ProtocolFile = (typeof PROTOCOL_FILES)[number];

const places = (workspace: string, repoRoot: string, name: ProtocolFile) =>
  workspace === repoRoot ? [join(workspace, name)] : [join(workspace, name), join(repoRoot, name)];

/** Removes the file from the workspace and the repo root. */
export function clearProtocolFile(workspace: string, repoRoot: string, name: ProtocolFile): void {
  for (const p of places(workspace, repoRoot, name)) rmSync(p, { force: true });
}

/**
 * The file's text (workspace first, then repo root), or null when neither has
 * it; both copies are deleted afterwards.
 */
export function takeProtocolFile(workspace: string, repoRoot: string, name: ProtocolFile): string | null {
  let text: string | null = null;
  for (const p of places(workspace, repoRoot, name)) {
    try {
      text = readFileSync(p, 'utf8');
      break;
    } catch {}
  }
  clearProtocolFile(workspace, repoRoot, name);
  return text;
}

export type ParsedFeedback =
  { ok: true; outcome: ReviewOutcome; details: string; missing: boolean } | { ok: false; reason: string };

const OUTCOMES: readonly ReviewOutcome[] = ['ACCEPT', 'REQUEST_CHANGES', 'ABANDON'];

/**
 * A verdict: first line ACCEPT | REQUEST_CHANGES | ABANDON, a blank line,
 * then details. A missing file means ACCEPT. Tolerated: surrounding
 * whitespace, CRLF, lower case, blank lines before the verdict, and details
 * that start right on the second line. Anything else is invalid.
 */
export function parseFeedback(text: string | null): ParsedFeedback {
  if (text == null) return { ok: true, outcome: 'ACCEPT', details: '', missing: true };
  const lines = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  if (lines.length === 0) return { ok: false, reason: 'the feedback file is empty' };
  const first = lines[0]!.trim();
  const outcome = OUTCOMES.find((o) => o === first.toUpperCase());
  if (!outcome) {
    const shown = first.length > 60 ? first.slice(0, 57) + '...' : first;
    return {
      ok: false,
      reason: `the first line of the feedback file is "${shown}", not ACCEPT, REQUEST_CHANGES or ABANDON`,
    };
  }
  const details = lines.slice(1).join('\n').trim();
  return { ok: true, outcome, details, missing: false };
}
