import { Box, Text } from 'ink';
import { useMemo } from 'react';
import type { Job } from '../src/model/job.js';
import { shortJobId } from '../src/model/job-id.js';
import { formatCost } from '../src/model/usage.js';
import type { TestRun } from '../src/job/job-log.js';
import type { CodeDiff } from '../src/dashboard/view/state.js';
import { visibleLine } from '../src/text/sanitize.js';
import { shownLine, shownLines, shownText } from '../src/text/shown.js';
import { wrapLines } from '../src/text/wrap.js';
import { diffLineColor, iterationDiffLines } from './IterationDiff.js';
import { Lines } from './Lines.js';

export interface CommitDetailProps {
  job: Job;
  /** 0-based change and iteration. */
  change: number;
  iteration: number;
  code: CodeDiff | undefined;
  width: number;
  height: number;
  scroll: number;
  color: boolean;
  tests?: TestRun[];
  fullOutput?: boolean;
}

/** Lines of a failing test's output shown until `o` asks for all of it. */
export const OUTPUT_TAIL = 10;

export interface DetailOptions {
  /** The job's test runs (from events.jsonl), for the failing commands' output; undefined while loading. */
  tests?: TestRun[];
  /** Every line of a failing command's output, not only its end. */
  fullOutput?: boolean;
  /** Wrap review comments, feedback and the reason to this width (0: no wrapping). */
  width?: number;
}

/** The output of a failing command of this iteration: its last run's, indented. */
function outputLines(
  runs: TestRun[] | undefined,
  change: number,
  iteration: number,
  command: string,
  full: boolean,
): string[] {
  if (!runs) return ['    (reading its output…)'];
  const run = runs
    .filter((r) => r.change === change + 1 && r.iteration === iteration + 1 && r.command === command)
    .at(-1);
  const body = run?.output.replace(/\n$/, '');
  if (!body) return ['    (no output recorded)'];
  const lines = body.split('\n');
  const shown = full ? lines : lines.slice(-OUTPUT_TAIL);
  const cut = lines.length - shown.length;
  return [
    ...(cut > 0 ? [`    … ${cut} earlier line${cut === 1 ? '' : 's'} (o shows all)`] : []),
    ...shown.map((l) => `    │ ${l}`),
  ];
}

/** Everything about one iteration, as lines (pure): agent and test text redacted and escaped. */
export function commitDetailLines(
  job: Job,
  change: number,
  iteration: number,
  code: CodeDiff | undefined,
  o: DetailOptions = {},
): string[] {
  const commit = job.changes[change]?.commits[iteration];
  if (!commit) return ['this iteration is gone'];
  const wrap = (lines: string[]) => (o.width ? wrapLines(lines, o.width) : lines);
  const isLast =
    change === job.changes.length - 1 && iteration === (job.changes[change]?.commits.length ?? 0) - 1;
  const out: string[] = [];
  // The commit stage rewrote the accepted iteration: the final commit is what a user merges.
  if (commit.iteration_commit_id)
    out.push(`final commit: ${commit.commit_id}  (iteration ${commit.iteration_commit_id.slice(0, 10)})`, '');
  out.push(
    `tests: ${commit.tests_passed == null ? 'not run' : commit.tests_passed ? 'passed' : 'FAILED'}`,
    ...commit.test_results.flatMap((t) => [
      `  ${t.exit_code === 0 ? '✓' : '✗'} ${shownLine(t.command)} (${t.timed_out_after_s !== undefined ? `timed out after ${t.timed_out_after_s} s` : `exit ${t.exit_code}`}, ${t.duration_ms} ms)`,
      ...(t.exit_code === 0 ? [] : outputLines(o.tests, change, iteration, t.command, o.fullOutput === true)),
    ]),
  );
  if (commit.review) {
    out.push(`review: ${commit.review.outcome} (${commit.review.reviewed_at})`);
    out.push(...wrap(shownLines(commit.review.comments || '(no comments)').map((l) => `  ${l}`)));
  } else if (commit.tests_passed === false)
    out.push('review: none (the tests failed; only passing work is reviewed)');
  else if (isLast && job.status !== 'active')
    // The reason is why there is no review: said on the review line, not left to be found below.
    out.push(
      ...wrap([
        job.failure_reason
          ? `review: none, the job ${job.status} before its review: ${shownText(job.failure_reason).replace(/\n/g, ' ')}`
          : `review: none (the job ${job.status} before its review)`,
      ]),
    );
  else out.push('review: none yet');
  if (isLast && job.failure_reason && (commit.review || commit.tests_passed === false))
    out.push(...wrap([`job ${job.status}: ${shownText(job.failure_reason).replace(/\n/g, ' ')}`]));
  // What decided the iteration (tests, review, reason) comes first: it is what a person opens this for.
  out.push('', 'draft message:', ...shownLines(commit.draft_message || '(none yet)').map((l) => `  ${l}`));
  out.push('', `files (${commit.files.length}):`);
  for (const f of commit.files)
    out.push(
      `  ${f.is_new ? 'A' : f.is_deleted ? 'D' : 'M'} ${visibleLine(f.path)}  +${f.additions} -${f.deletions}`,
    );
  out.push(
    '',
    `usage: ${commit.usage.input_tokens} in / ${commit.usage.output_tokens} out tokens, ${formatCost(commit.usage.cost)}`,
  );
  if (commit.feedback)
    out.push('started by feedback:', ...wrap(shownLines(commit.feedback).map((l) => `  ${l}`)));
  out.push('', '── iteration diff ──');
  out.push(...iterationDiffLines(code));
  return out;
}

/** The commit detail: draft message, tests, review, files, iteration diff and the scrollable code diff. */
export function CommitDetail({
  job,
  change,
  iteration,
  code,
  width,
  height,
  scroll,
  color,
  tests,
  fullOutput,
}: CommitDetailProps) {
  const commit = job.changes[change]?.commits[iteration];
  const lines = useMemo(
    () => commitDetailLines(job, change, iteration, code, { tests, fullOutput, width }),
    [job, change, iteration, code, tests, fullOutput, width],
  );
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold wrap="truncate-end">
        job {shortJobId(job.id)} › change {change + 1} › iteration {iteration + 1}{' '}
        {commit?.commit_id.slice(0, 10) ?? ''}
        {/* The iteration's stable id: what ii job diff --from/--to take besides change.iteration. */}
        {commit?.id ? ` · id ${visibleLine(commit.id)}` : ''}
      </Text>
      <Lines
        lines={lines}
        width={width}
        height={height - 1}
        scroll={scroll}
        color={color ? diffLineColor : undefined}
      />
    </Box>
  );
}
