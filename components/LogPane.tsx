import { Box, Text } from 'ink';
import { Lines } from './Lines.js';

export interface LogPaneProps {
  title: string;
  lines: string[];
  width: number;
  height: number;
  /** Lines scrolled back from the end. */
  scroll?: number;
}

/** The live pane: the active job's latest agent messages and tool calls, newest at the bottom. */
export function LogPane({ title, lines, width, height, scroll = 0 }: LogPaneProps) {
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold wrap="truncate-end">
        {title}
      </Text>
      {lines.length === 0 ? (
        <Box height={height - 1}>
          <Text dimColor>(no agent activity yet)</Text>
        </Box>
      ) : (
        <Lines lines={lines} width={width} height={height - 1} scroll={scroll} tail />
      )}
    </Box>
  );
}
