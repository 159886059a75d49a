import { Box, Text } from 'ink';
import type { FileChange } from '../src/model/job.js';
import { shortJobId } from '../src/model/job-id.js';
import { visibleLine } from '../src/text/sanitize.js';
import { Lines } from './Lines.js';

export interface FileListProps {
  jobId: string;
  files: FileChange[];
  width: number;
  height: number;
  scroll: number;
}

/** The files the job's agent modified, live from the file tracker or from its record; a name's control characters (a newline) shown escaped. */
export function FileList({ jobId, files, width, height, scroll }: FileListProps) {
  const lines = files.map(
    (f) =>
      `  ${f.is_new ? 'A' : f.is_deleted ? 'D' : 'M'} ${visibleLine(f.path)}  +${f.additions} -${f.deletions}`,
  );
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold wrap="truncate-end">
        Modified files of job {shortJobId(jobId)} ({files.length}) · esc closes
      </Text>
      {lines.length ? (
        <Lines lines={lines} width={width} height={height - 1} scroll={scroll} />
      ) : (
        <Text dimColor>(no files modified yet)</Text>
      )}
    </Box>
  );
}
