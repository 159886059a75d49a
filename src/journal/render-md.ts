// journal.md: the journal for people. Pure: it renders a Journal and nothing
// else, so it never says more (or less) than journal.json. Every value that
// came from a file or a command was redacted by the builder already.
import { NA } from '../model/derive.js';
import type { Usage } from '../model/job.js';
import { formatCost, USAGE_STAGES } from '../model/usage.js';
import type { Journal } from './schema.js';

const short = (sha: string | null | undefined): string => (sha ? sha.slice(0, 12) : NA);

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
  `${u.input_tokens.toLocaleString('en-US')} in / ${u.output_tokens.toLocaleString('en-US')} out, ${formatCost(u.cost)}`;

const TERMINAL: Record<Journal['status']['terminal_state'], string> = {
  complete: 'complete',
  stopped: 'stopped',
  running: 'running',
  unknown: 'unknown (the runner is gone)',
};

export function renderJournalMd(j: Journal): string {
  const out: string[] = [];
  const p = (...lines: string[]) => out.push(...lines);
  const id = j.identity;
  p(`# Journal of job ${id.job_id}`, '');
  p(`Todo ${id.todo.id}: ${id.todo.title === null ? NA : cell(id.todo.title)}`, '');
  p(
    `- Repository: ${id.repo_root ?? NA} (${id.repo})`,
    `- Base: ${short(id.base_commit)} · Head: ${short(id.head_commit)}`,
    `- Resumed from: ${j.resumed_from ?? 'none'}`,
    `- Generated ${j.generated_at} by ${j.generated_by} (schema ${j.schema_version})`,
    '',
  );

  const st = j.status;
  p('## Status', '');
  p(
    `- State: ${TERMINAL[st.terminal_state]} (job ${st.job_status}, phase ${st.phase})`,
    `- Stop reason: ${st.stop_reason === null ? 'none' : cell(st.stop_reason)}`,
    `- Started: ${st.started_at} · Ended: ${st.ended_at ?? NA} · Duration: ${humanDuration(st.duration_seconds)}`,
    '',
  );

  p('## Milestones', '');
  if (!j.milestones) p(NA, '');
  else {
    const c = j.milestones.changes;
    p(
      `- Changes: ${c.verified} verified of ${c.total} (${c.attempted} attempted)`,
      `- Iterations: ${j.milestones.iterations}`,
      '',
    );
  }

  p('## Checkpoints', '');
  if (!j.checkpoints) p(NA, '');
  else if (j.checkpoints.items.length === 0) p('No accepted commits.', '');
  else {
    for (const c of j.checkpoints.items) p(`- ${short(c.sha)} ${c.committed_at} ${cell(c.subject)}`);
    p('', `Last: ${j.checkpoints.last_sha ?? NA}`, '');
  }

  p('## Verification', '');
  const v = j.verification;
  if (!v) p(NA, '');
  else {
    p(
      `- Test runs: ${v.attempts_total} (${v.passed} passed, ${v.failed} failed)`,
      `- Time in tests: ${humanDuration(v.total_duration_ms / 1000)}`,
      '',
    );
    const f = v.last_failure;
    if (f) {
      p(`Last failure: \`${cell(f.command)}\` exited ${f.exit_code}.`, '');
      if (f.excerpt === null) p('No output excerpt.', '');
      else if (f.excerpt === '') p('It printed nothing.', '');
      else p(fenced(f.excerpt), '');
      if (f.log_path) p(`Full output: ${f.log_path}`, '');
    }
  }

  p('## Changes', '');
  const ch = j.changes;
  if (!ch) p(NA, '');
  else if (ch.files_changed === 0) p('No files changed.', '');
  else {
    p(
      `${ch.files_changed} file${ch.files_changed === 1 ? '' : 's'} changed, +${ch.insertions} −${ch.deletions}`,
      '',
    );
    p('| file | + | − |', '| --- | ---: | ---: |');
    for (const f of ch.top_files) p(`| ${cell(f.path)} | ${f.insertions} | ${f.deletions} |`);
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
  if (!nt) p(NA, '');
  else if (nt.count === 0) p(`No notes (add one with \`ii job note ${id.job_id} "text"\`).`, '');
  else {
    const shown = nt.recent.length < nt.count ? ` (the latest ${nt.recent.length})` : '';
    p(`${nt.count} note${nt.count === 1 ? '' : 's'} in ${nt.path}${shown}:`, '');
    for (const note of nt.recent) p(`- ${note.ts} ${cell(note.text)}`);
    p('');
  }

  p('## Warnings', '');
  if (j.warnings.length === 0) p('No warnings', '');
  else p(...j.warnings.map((w) => `- ${cell(w)}`), '');

  p('## Sources', '');
  for (const [key, source] of Object.entries(j.extraction)) p(`- ${key}: ${source}`);
  return out.join('\n') + '\n';
}
