import { Box, Text } from 'ink';
import { changeWord } from '../src/model/derive.js';
import type { Job } from '../src/model/job.js';
import { shortJobId } from '../src/model/job-id.js';
import { formatCost } from '../src/model/usage.js';
import { count } from '../src/dashboard/view/count.js';
import { visibleLine } from '../src/text/sanitize.js';

export interface ChangeHistoryProps {
  job: Job;
  /** 0-based. */
  change: number;
  width: number;
}

export const CHANGE_HISTORY_HEIGHT = 2;

/** The change's header above its iteration history (the commits board). */
export function ChangeHistory({ job, change, width }: ChangeHistoryProps) {
  const ch = job.changes[change];
  if (!ch)
    return (
      <Box height={CHANGE_HISTORY_HEIGHT}>
        <Text>change {change + 1}: gone</Text>
      </Box>
    );
  const cost = ch.commits.reduce((n, c) => n + c.usage.cost, 0);
  return (
    <Box flexDirection="column" width={width} height={CHANGE_HISTORY_HEIGHT}>
      <Text bold wrap="truncate-end">
        job {shortJobId(job.id)} › change {change + 1} ({visibleLine(ch.change_id)})
      </Text>
      <Text wrap="truncate-end">
        {changeWord(ch, job)} · {count(ch.commits.length, 'iteration')} · {formatCost(cost)} · started{' '}
        {ch.created_at}
      </Text>
    </Box>
  );
}
