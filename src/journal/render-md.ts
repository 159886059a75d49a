// journal.md: the journal for people. Pure: it renders a Journal and nothing
// else, so it never says more (or less) than journal.json. Every value that
// came from a file or a command was redacted by the builder already.
import { NA } from '../model/derive.js';
import type { Usage } from '../model/job.js';
import { formatCost, USAGE_STAGES } from '../model/usage.js';
import { visibleBytes } from '../text/sanitize.js';
import type { Journal } from './schema.js';
import { NO_OUTPUT_LOGGED } from './sections.js';
import { grouped } from '../text/grouped.js';

const short = (sha: string | null | undefined): string => (sha ? sha.slice(0, 12) : NA);

/** The line the spec's template puts before the listed warnings. */
export const WARNINGS_LEAD = '⚠️ The following issues were encountered while generating this journal:';

/** "1h 2m 3s", "4.2s"; N/A for an unknown duration. */
export function humanDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return NA;
  if (seconds < 60) return `${Math.round(seconds * 10) / 10}s`;
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const parts = [h ? `${h}h` : '', m ? `${m}m` : '', s % 60 ? `${s % 60}s` : ''].filter(Boolean);
  return parts.join(' ');
}

/** A fence longer than any run of backticks in the text, so the text cannot close it. */
function fenced(text: string, lang = 'text'): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

/** Text for a table cell or a list item: one line, pipes escaped. */
const cell = (s: string): string => s.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');

const usageLine = (u: Usage): string =>
  `${grouped(u.input_tokens)} in / ${grouped(u.output_tokens)} out, ${formatCost(u.cost)}`;

const TERMINAL: Record<Journal['status']['terminal_state'], string> = {
  complete: 'complete',
  stopped: 'stopped',
  running: 'running',
  unknown: 'unknown (the runner is gone)',
};

export function renderJournalMd(j: Journal): string {
  const out: string[] = [];
  const p = (...lines: string[]) => out.push(...lines);
  p(`# Journal of job ${j.run_id}`, '');
  p(`Todo ${j.task.todo_id}: ${j.task.title === null ? NA : cell(j.task.title)}`, '');
  const resumed = j.resumed_from
    ? `${j.resumed_from.run_id} (at ${short(j.resumed_from.checkpoint_sha)})`
    : 'none';
  p(
    `- Repository: ${j.repo_root ?? NA} (${j.repo})`,
    `- Base: ${short(j.base_sha)} · Head: ${short(j.head_sha)}`,
    `- Resumed from: ${resumed}`,
    `- Generated ${j.generated_at} by ${j.generated_by} (schema ${j.schema_version})`,
    '',
  );

  const st = j.status;
  p('## Status', '');
  p(
    `- State: ${TERMINAL[st.terminal_state]} (job ${st.job_status}, phase ${st.phase})`,
    `- Stop reason: ${st.stop_reason === null ? 'none' : cell(st.stop_reason)}`,
    `- Started: ${st.timestamps.started_at ?? NA} · Ended: ${st.timestamps.ended_at ?? NA} · Duration: ${humanDuration(st.duration_seconds)}`,
  );
  if (st.waited_seconds > 0)
    p(
      `- Waited for a person: ${humanDuration(st.waited_seconds)} · Working time without the waits: ${humanDuration(st.working_seconds)}`,
    );
  if (st.landed)
    p(
      `- Landed: on ${cell(st.landed.onto)} at ${st.landed.commit} (${st.landed.at}; ${st.landed.tested ? 'tested on the rebased tip' : 'not tested: --no-test'})`,
    );
  p('');

  p('## Milestones', '');
  if (j.sources.milestones === 'none') p(NA, '');
  else {
    const c = j.milestones;
    p(
      `- Changes: ${c.verified} verified of ${c.total} (${c.attempted} attempted, ${c.accepted} accepted by review)`,
      `- Iterations: ${j.milestones.iterations}`,
      '',
    );
  }

  p('## Checkpoints', '');
  if (j.sources.checkpoints === 'none') p(NA, '');
  else if (j.checkpoints.list.length === 0) p('No accepted commits.', '');
  else {
    for (const c of j.checkpoints.list) p(`- ${short(c.sha)} ${c.created_at} ${cell(c.title)}`);
    p('', `Last: ${j.checkpoints.last_sha ?? NA}`, '');
  }

  // An attempt is one run of every test command, not one test.
  p('## Verification Attempts', '');
  const v = j.verification;
  if (j.sources.verification === 'none') p(NA, '');
  else {
    const s = v.summary;
    p(
      `- Verification attempts: ${s.attempts_total} (${s.attempts_passed} passed, ${s.attempts_failed} failed)`,
      `- Time in tests: ${humanDuration(s.total_duration_seconds)}`,
      '',
    );
    const f = v.last_failure;
    if (f) {
      p(`Last failure: \`${cell(f.command)}\` exited ${f.exit_code}.`, '');
      if (j.sources.last_failure === 'job record' || j.sources.last_failure === NO_OUTPUT_LOGGED)
        p('No output excerpt.', '');
      else if (f.error_excerpt === '') p('It printed nothing.', '');
      else p(fenced(f.error_excerpt), '');
      p(`Full output: ${f.log_path}`, '');
    }
  }

  p('## Changes', '');
  const ch = j.changes;
  if (ch.files_changed === null) p(NA, '');
  else if (ch.files_changed === 0) p('No files changed.', '');
  else {
    p(
      `${ch.files_changed} file${ch.files_changed === 1 ? '' : 's'} changed, +${ch.insertions} −${ch.deletions}`,
      '',
    );
    p('| file | + | − |', '| --- | ---: | ---: |');
    for (const f of ch.top_files ?? []) p(`| ${cell(f.path)} | ${f.insertions} | ${f.deletions} |`);
    p('');
    if (ch.diff_stat) p(fenced(ch.diff_stat), '');
  }

  p('## Next action', '');
  const n = j.next_action;
  if (!n) p(NA, '');
  else {
    p(`**${cell(n.title)}**`, '');
    if (n.command) p(fenced(n.command, 'sh'), '');
    if (n.why) p(`Why: ${cell(n.why)}`, '');
  }

  p('## Usage', '');
  const u = j.usage;
  p(`- Total: ${usageLine(u.total)}`);
  for (const stage of USAGE_STAGES) {
    const s = u.by_stage[stage];
    if (s) p(`- ${stage} (${s.sessions} session${s.sessions === 1 ? '' : 's'}): ${usageLine(s)}`);
  }
  if (u.unattributed.input_tokens + u.unattributed.output_tokens + u.unattributed.cost > 0)
    p(`- Not attributed to a stage: ${usageLine(u.unattributed)}`);
  p('');

  p('## Notes', '');
  const nt = j.notes;
  if (j.sources.notes === 'none') p(NA, '');
  else if (nt.count === 0) p(`No notes (add one with \`ii job note ${j.run_id} "text"\`).`, '');
  else {
    const shown = nt.recent.length < nt.count ? ` (the latest ${nt.recent.length})` : '';
    p(`${nt.count} note${nt.count === 1 ? '' : 's'} in ${nt.path}${shown}:`, '');
    for (const note of nt.recent) p(`- ${note.ts} ${cell(note.text)}`);
    p('');
  }

  // As the spec's template renders them (journal-v2, Fixes Applied 4).
  p('## Warnings', '');
  if (j.warnings.length === 0) p('*No warnings*', '');
  else p(WARNINGS_LEAD, '', ...j.warnings.map((w) => `- ${cell(w)}`), '');

  p('## Sources', '');
  for (const [key, source] of Object.entries(j.sources)) p(`- ${key}: ${source}`);
  p(
    '',
    `Extraction: ${Object.entries(j.extraction)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  // The file is UTF-8: a file name that is not (in the files and the diff
  // stat) keeps its bytes as \xNN instead of turning into U+FFFD (sanitize.ts).
  return visibleBytes(out.join('\n') + '\n');
}
