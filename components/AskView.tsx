import { Box, Text } from 'ink';
import type { Job } from '../src/model/job.js';
import { askLines } from '../src/dashboard/view/needs-you.js';
import { wrapLines } from '../src/text/wrap.js';
import { Lines } from './Lines.js';
import { paint } from './tone.js';

export interface AskViewProps {
  job: Job;
  /** The job's todo title (shown escaped). */
  title: string;
  width: number;
  height: number;
  scroll: number;
  color: boolean;
  /** The clock the wait is counted to (the frame's time). */
  now: number;
}

/**
 * A waiting job's permission request in full: tool kind, title, command or
 * paths, diff preview, the agent's options and how long it has waited; every
 * field the agent wrote escaped and redacted (askLines), long lines wrapped.
 */
export function AskView({ job, title, width, height, scroll, color, now }: AskViewProps) {
  const lines = wrapLines(askLines(job, title, now), Math.max(10, width));
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold wrap="truncate-end" color={paint(color, 'yellow')}>
        Needs you · y allow once · A allow always · n reject with a note · esc closes
      </Text>
      <Lines lines={lines} width={width} height={height - 1} scroll={scroll} />
    </Box>
  );
}
