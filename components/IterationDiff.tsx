import type { CodeDiff } from '../src/dashboard/view/state.js';
import { formatCost } from '../src/model/usage.js';
import { visibleLine } from '../src/text/sanitize.js';
import { shownLine, shownLines } from '../src/text/shown.js';

/**
 * The iteration diff (files, tokens, cost, summary) then the code diff, as
 * lines: names escaped, text redacted. All of it comes from one load (as
 * `ii job diff` computes it), so the two never disagree.
 */
export function iterationDiffLines(code: CodeDiff | undefined): string[] {
  if (!code) return ['(loading iteration diff…)'];
  const d = code.loaded;
  if (!d) return [`(iteration diff unavailable: ${shownLine(code.error ?? 'unknown error')})`];
  const out = [
    d.from_iteration
      ? `iterations ${d.from_iteration.change}.${d.from_iteration.iteration} → ${d.change}.${d.iteration}: ${d.from_commit?.slice(0, 10) ?? 'N/A'} → ${d.to_commit.slice(0, 10)}`
      : `iteration ${d.iteration} of change ${d.change}: ${d.from_commit?.slice(0, 10) ?? 'N/A'} → ${d.to_commit.slice(0, 10)}`,
    `files: ${d.files_added.length} added, ${d.files_modified.length} modified, ${d.files_removed.length} removed`,
    ...d.files_added.map((f) => `  A ${visibleLine(f)}`),
    ...d.files_modified.map((f) => `  M ${visibleLine(f)}`),
    ...d.files_removed.map((f) => `  D ${visibleLine(f)}`),
    `tokens: +${d.usage_delta.input_tokens} in, +${d.usage_delta.output_tokens} out · cost +${formatCost(d.usage_delta.cost)}`,
    `summary: ${shownLine(d.summary)}`,
    '',
  ];
  if (d.diff_error) out.push(`(code diff unavailable: ${shownLine(d.diff_error)})`);
  else if (!d.diff.trim()) out.push('(no code changes between the two iterations)');
  else out.push(...shownLines(d.diff.replace(/\n$/, '')));
  return out;
}

/** Colours a unified diff line. */
export function diffLineColor(l: string): string | undefined {
  if (l.startsWith('+++') || l.startsWith('---')) return undefined;
  if (l.startsWith('+') || l.startsWith('  A ')) return 'green';
  if (l.startsWith('-') || l.startsWith('  D ')) return 'red';
  if (l.startsWith('@@') || l.startsWith('  M ')) return 'cyan';
  return undefined;
}
