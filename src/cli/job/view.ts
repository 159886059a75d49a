// Text renderings of jobs for `ii job list` and `ii job show` (pure). What
// agents and tests wrote (titles, reasons, feedback, reviews) goes through
// src/text/shown.ts: secrets redacted, control characters escaped.
import {
  awaitsLanding,
  changeWord,
  changeCountLabel,
  commitColumn,
  currentChange,
  isStale,
  iterationLabel,
  jobColumn,
  landingUnderWay,
  NA,
  noCommitNote,
  tracksChanges,
} from '../../model/derive.js';
import type { Job, JobCommit, Usage } from '../../model/job.js';
import { isWaiting, type PermissionAsk } from '../../model/permission-ask.js';
import { formatCost, USAGE_STAGES, usageByStage } from '../../model/usage.js';
import { shortestUniquePrefix } from '../../model/prefix.js';
import type { Todo } from '../../model/todo.js';
import { localProbe } from '../../proc/alive.js';
import { visibleLine } from '../../text/sanitize.js';
import { shownLine, shownText } from '../../text/shown.js';
import { age, type Style, table } from '../format.js';
import { askHistoryLines, askQuestionLines } from './ask-view.js';

const highlight = (st: Style, id: string, all: string[]) => {
  const n = shortestUniquePrefix(id, all);
  return st.bold(id.slice(0, n)) + st.dim(id.slice(n));
};

export function jobListTable(jobs: Job[], todos: Map<string, Todo>, st: Style, now = Date.now()): string {
  const jobIds = jobs.map((j) => j.id);
  const todoIds = [...todos.keys()];
  const sessionIds = jobs.flatMap((j) => (j.session_id ? [j.session_id] : []));
  const rows = jobs.map((j) => {
    const stale = isStale(j, now, localProbe);
    const status = stale
      ? st.yellow('stale')
      : isWaiting(j)
        ? st.yellow('waiting')
        : j.status === 'failed'
          ? st.red(j.status)
          : j.landed
            ? st.green('LANDED')
            : j.land_conflict
              ? st.yellow('conflict')
              : awaitsLanding(j)
                ? j.landing?.state === 'refused'
                  ? st.yellow('to land (refused)')
                  : st.cyan('to land')
                : j.status;
    return [
      highlight(st, j.id, jobIds),
      highlight(st, j.todo_id, todoIds),
      j.session_id ? highlight(st, j.session_id, sessionIds) : NA,
      j.status === 'active' ? j.stage : '-',
      status,
      changeCountLabel(j),
      iterationLabel(j),
      age(j.started_at, now),
      shownLine(todos.get(j.todo_id)?.title ?? NA),
    ];
  });
  return table(['JOB', 'TODO', 'SESSION', 'STAGE', 'STATUS', 'CHANGES', 'ITERATION', 'AGE', 'TITLE'], rows);
}

const tests = (c: JobCommit, st: Style) =>
  c.tests_passed == null ? st.dim('not run') : c.tests_passed ? st.green('passed') : st.red('failed');

const usageLine = (u: Usage) => `${u.input_tokens} in / ${u.output_tokens} out tokens, ${formatCost(u.cost)}`;

export function jobDetail(
  job: Job,
  todo: Todo | null,
  st: Style,
  now = Date.now(),
  asks: PermissionAsk[] = [],
): string {
  const out: string[] = [];
  const stale = isStale(job, now, localProbe);
  out.push(
    `${st.bold(`job ${job.id}`)}  ${job.status}${job.status === 'active' ? ` · ${job.stage}` : ''}${stale ? st.yellow('  (stale: its runner is gone)') : ''}  [${jobColumn(job)}]`,
  );
  out.push(`  todo:      ${job.todo_id}  ${shownLine(todo?.title ?? NA)}`);
  out.push(
    `  session:   ${job.session_id ?? NA}${job.workspace_path ? `  (workspace ${shownLine(job.workspace_path)})` : ''}`,
  );
  out.push(
    `  base rev:  ${job.base_rev ?? NA}${job.base_branch ? ` (from ${shownLine(job.base_branch)})` : ''}`,
  );
  out.push(`  started:   ${job.started_at} (${age(job.started_at, now)} ago)`);
  out.push(...askQuestionLines(job, st, now), ...askHistoryLines(job, asks));
  if (job.completed_at) out.push(`  ended:     ${job.completed_at}`);
  // A reason holds lines (the end of a failing command's output): each on its own, under the first.
  if (job.failure_reason)
    out.push(`  reason:    ${shownText(job.failure_reason).split('\n').join('\n             ')}`);
  if (job.landed)
    out.push(
      `  landed:    on ${shownLine(job.landed.onto)} at ${job.landed.commit}, ${job.landed.at}${job.landed.tested ? ' (tested on the rebased tip)' : ' (not tested: --no-test)'}`,
    );
  else if (job.land_conflict) {
    const c = job.land_conflict;
    out.push(
      `  landing:   stopped in a conflict on ${shownLine(c.onto)} (${c.at}): ${c.files.map(shownLine).join(', ')}`,
      `             resolve in ${shownLine(c.worktree)}, git add, then ii job land ${job.id} --continue (or --abort)`,
    );
  } else if (job.landing?.state === 'landing')
    out.push(
      `  landing:   ${shownLine(job.landing.step)} (since ${job.landing.at})` +
        // Its process was killed mid-way: nothing moved unless it was recorded.
        (landingUnderWay(job.landing, localProbe)
          ? ''
          : `; its process is gone: ${awaitsLanding(job) ? 'the next ii run --land lands it, or ' : ''}ii job land ${job.id}`),
    );
  else if (job.landing?.state === 'refused') {
    // git's refusal keeps its lines (the files, its advice), each under the first.
    const [first = '', ...rest] = shownText(job.landing.step).split('\n');
    out.push(
      `  landed:    no: ${first}`,
      ...rest.map((l) => `             ${l}`),
      `             refused ${job.landing.at}; ii job land ${job.id} tries again`,
      ...(awaitsLanding(job)
        ? ['             to land (started by ii run --land), but no landing runner tries it again']
        : []),
    );
  } else if (awaitsLanding(job))
    out.push(
      `  landed:    not yet: to land (started by ii run --land); the next ii run --land lands it, or ii job land ${job.id}`,
    );
  else if (job.status === 'completed' && job.changes.some((c) => c.commits.length > 0))
    out.push(`  landed:    not yet (ii job land ${job.id})`);
  out.push(`  usage:     ${usageLine(job.usage)}`);
  const { by } = usageByStage(job.agent_sessions);
  for (const stage of USAGE_STAGES) {
    const u = by[stage];
    if (u)
      out.push(
        `    ${stage.padEnd(15)} ${usageLine(u)}  (${u.sessions} session${u.sessions === 1 ? '' : 's'})`,
      );
  }
  out.push(`  auto-commit: ${job.auto_commit ? 'on' : 'off'}`);
  if (job.feedback) out.push('  feedback:', ...indent(job.feedback, 4));
  out.push('  agent sessions:');
  if (job.agent_sessions.length === 0) out.push('    none');
  for (const a of job.agent_sessions)
    out.push(`    ${a.purpose.padEnd(15)} ${a.id}${a.usage ? `  ${usageLine(a.usage)}` : ''}`);
  out.push('  changes:');
  if (job.changes.length === 0)
    out.push(
      !tracksChanges(job)
        ? `    ${NA} (no changes recorded)`
        : job.status === 'active'
          ? '    none yet'
          : '    none',
    );
  const current = job.status === 'active' ? currentChange(job) : null;
  job.changes.forEach((ch, i) => {
    const isCurrentChange = i === job.changes.length - 1;
    const col = changeWord(ch, job);
    const inProgress = ch === current;
    out.push(
      `    ${i + 1}. ${visibleLine(ch.change_id)}  ${col}  (${ch.commits.length} iteration${ch.commits.length === 1 ? '' : 's'})${inProgress ? st.cyan('  ← in progress') : ''}`,
    );
    ch.commits.forEach((c, k) => {
      const isCurrent = isCurrentChange && k === ch.commits.length - 1;
      const review = c.review ? c.review.outcome : st.dim('no review');
      out.push(
        `       iteration ${k + 1}  ${c.commit_id.slice(0, 10)}  ${commitColumn(c, { isCurrent, job })}  tests: ${tests(c, st)}  review: ${review}  files: ${c.files.length}  id: ${c.id ? visibleLine(c.id) : NA}`,
      );
      if (c.review?.comments) out.push(...indent(c.review.comments, 10));
    });
    if (ch.commits.length === 0) out.push(`       ${st.dim(noCommitNote(job))}`);
  });
  if (job.project_review) {
    out.push(`  project review: ${job.project_review.outcome}`);
    if (job.project_review.comments) out.push(...indent(job.project_review.comments, 4));
  }
  return out.join('\n');
}

/** Agent text, shown (redacted, escaped), each line indented by `n`. */
function indent(text: string, n: number): string[] {
  const pad = ' '.repeat(n);
  return shownText(text)
    .split('\n')
    .map((l) => pad + l);
}
