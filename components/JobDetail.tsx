import { Box, Text } from 'ink';
import { changesMade, NA } from '../src/model/derive.js';
import type { Job } from '../src/model/job.js';
import { formatCost } from '../src/model/usage.js';
import { count } from '../src/dashboard/view/count.js';
import { visibleLine } from '../src/text/sanitize.js';
import { shownLine } from '../src/text/shown.js';

export interface JobDetailProps {
  job: Job;
  title: string;
  stale: boolean;
  width: number;
}

/** Lines JobDetail takes above the changes board. */
export const JOB_DETAIL_HEIGHT = 3;

/** The job's header above its changes board. */
export function JobDetail({ job, title, stale, width }: JobDetailProps) {
  const status = stale
    ? 'STALE (runner gone)'
    : job.status === 'active'
      ? `active, ${job.stage}`
      : job.status;
  return (
    <Box flexDirection="column" width={width} height={JOB_DETAIL_HEIGHT}>
      <Text bold wrap="truncate-end">
        job {job.id} · {shownLine(title)}
      </Text>
      <Text wrap="truncate-end">
        {status} · {count(changesMade(job), 'change')} · base {job.base_rev?.slice(0, 10) ?? NA} ·{' '}
        {formatCost(job.usage.cost)} · {job.usage.input_tokens}/{job.usage.output_tokens} tokens · auto-commit{' '}
        {job.auto_commit ? 'on' : 'off'}
      </Text>
      <Text wrap="truncate-end" dimColor>
        {job.failure_reason
          ? `reason: ${shownLine(job.failure_reason)}`
          : job.project_review
            ? `project review: ${job.project_review.outcome}`
            : `workspace: ${visibleLine(job.workspace_path ?? NA)}`}
      </Text>
    </Box>
  );
}
