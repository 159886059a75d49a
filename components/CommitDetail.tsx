import { Box, Text } from 'ink';
import { useMemo } from 'react';
import type { Job } from '../src/model/job.js';
import type { CodeDiff } from '../src/live/state.js';
import { visibleLine } from '../src/text/sanitize.js';
import { shownLine, shownLines } from '../src/text/shown.js';
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
}

/** Everything about one iteration, as lines (pure): agent and test text redacted and escaped. */
export function commitDetailLines(
  job: Job,
  change: number,
  iteration: number,
  code: CodeDiff | undefined,
): string[] {
  const commit = job.changes[change]?.commits[iteration];
  if (!commit) return ['this iteration is gone'];
  const out: string[] = [];
  // The commit stage rewrote the accepted iteration: the final commit is what a user merges.
  if (commit.iteration_commit_id)
    out.push(`final commit: ${commit.commit_id}  (iteration ${commit.iteration_commit_id.slice(0, 10)})`, '');
  out.push('draft message:', ...shownLines(commit.draft_message || '(none yet)').map((l) => `  ${l}`), '');
  out.push(
    `tests: ${commit.tests_passed == null ? 'not run' : commit.tests_passed ? 'passed' : 'FAILED'}`,
    ...commit.test_results.map(
      (t) =>
        `  ${t.exit_code === 0 ? '✓' : '✗'} ${shownLine(t.command)} (${t.timed_out_after_s !== undefined ? `timed out after ${t.timed_out_after_s} s` : `exit ${t.exit_code}`}, ${t.duration_ms} ms)`,
    ),
  );
  if (commit.review) {
    out.push(`review: ${commit.review.outcome} (${commit.review.reviewed_at})`);
    out.push(...shownLines(commit.review.comments || '(no comments)').map((l) => `  ${l}`));
  } else out.push('review: none yet');
  out.push('', `files (${commit.files.length}):`);
  for (const f of commit.files)
    out.push(
      `  ${f.is_new ? 'A' : f.is_deleted ? 'D' : 'M'} ${visibleLine(f.path)}  +${f.additions} -${f.deletions}`,
    );
  out.push(
    '',
    `usage: ${commit.usage.input_tokens} in / ${commit.usage.output_tokens} out tokens, $${commit.usage.cost.toFixed(4)}`,
  );
  if (commit.feedback) out.push('started by feedback:', ...shownLines(commit.feedback).map((l) => `  ${l}`));
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
}: CommitDetailProps) {
  const commit = job.changes[change]?.commits[iteration];
  const lines = useMemo(
    () => commitDetailLines(job, change, iteration, code),
    [job, change, iteration, code],
  );
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold wrap="truncate-end">
        job {job.id.slice(0, 7)} › change {change + 1} › iteration {iteration + 1}{' '}
        {commit?.commit_id.slice(0, 10) ?? ''}
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
