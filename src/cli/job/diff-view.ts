// The text of `ii job diff` (pure). File names are shown escaped, the diff
// and the summary redacted and escaped (src/text).
import type { IterationDiff } from '../../history/iteration-diff.js';
import { formatCost } from '../../model/usage.js';
import { visibleLine } from '../../text/sanitize.js';
import { shownLine, shownText } from '../../text/shown.js';
import type { Style } from '../format.js';

const arrow = (from: string | null, to: string | null) =>
  from === to ? `${to ?? 'N/A'} (unchanged)` : `${from ?? 'N/A'} → ${to ?? 'N/A'}`;

/** Colours a unified diff's lines (only when colour is on). */
function colourDiff(diff: string, st: Style): string {
  return diff
    .split('\n')
    .map((l) =>
      l.startsWith('+++') || l.startsWith('---') || l.startsWith('diff ')
        ? st.bold(l)
        : l.startsWith('+')
          ? st.green(l)
          : l.startsWith('-')
            ? st.red(l)
            : l.startsWith('@@')
              ? st.cyan(l)
              : l,
    )
    .join('\n');
}

export function renderIterationDiff(
  d: IterationDiff,
  diff: string,
  diffError: string | null,
  st: Style,
): string {
  const out: string[] = [];
  const from = d.from_commit ? d.from_commit.slice(0, 10) : 'N/A';
  out.push(
    st.bold(
      d.from_iteration
        ? `job ${d.job_id} · iteration ${d.from_iteration.change}.${d.from_iteration.iteration} → ${d.change}.${d.iteration} (change ${d.change_id})`
        : `job ${d.job_id} · change ${d.change} (${d.change_id}) · iteration ${d.iteration}`,
    ) + `  ${from} → ${d.to_commit.slice(0, 10)}`,
  );
  // The stable ids, which --from/--to take as well as change.iteration.
  if (d.iteration_id)
    out.push(
      `id:       ${d.iteration_id}${d.previous_iteration_id ? ` (compared with ${d.previous_iteration_id})` : ''}`,
    );
  out.push(`stage:    ${arrow(d.stage.from, d.stage.to)}`);
  out.push(`status:   ${arrow(d.status.from, d.status.to)}`);
  out.push(
    `files:    ${d.files_added.length} added, ${d.files_modified.length} modified, ${d.files_removed.length} removed`,
  );
  for (const f of d.files_added) out.push(st.green(`  A ${visibleLine(f)}`));
  for (const f of d.files_modified) out.push(st.yellow(`  M ${visibleLine(f)}`));
  for (const f of d.files_removed) out.push(st.red(`  D ${visibleLine(f)}`));
  out.push(
    `tokens:   +${d.usage_delta.input_tokens} input, +${d.usage_delta.output_tokens} output    cost: +${formatCost(d.usage_delta.cost)}`,
  );
  out.push(`tests:    ${d.tests_passed == null ? 'not run' : d.tests_passed ? 'passed' : 'failed'}`);
  out.push(`review:   ${d.review ? d.review.outcome : 'none'}`);
  // Stored as the iteration ended unless said: --recompute, a pair, or an older record.
  out.push(`summary:  ${shownLine(d.summary)}${d.summary_stored ? '' : st.dim(' (computed now)')}`);
  out.push('');
  if (diffError) out.push(st.yellow(`(code diff unavailable: ${shownLine(diffError)})`));
  else if (!diff.trim()) out.push(st.dim('(no code changes between the two iterations)'));
  else out.push(colourDiff(shownText(diff.replace(/\n$/, '')), st));
  return out.join('\n');
}
