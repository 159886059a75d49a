import { Box, Text } from 'ink';
import { visibleText } from '../src/text/sanitize.js';

export interface LinesProps {
  lines: string[];
  width: number;
  height: number;
  /** First line shown; clamped so the last screenful stays full. */
  scroll?: number;
  /** Show the end (a log) rather than the start when not scrolled. */
  tail?: boolean;
  color?: (line: string) => string | undefined;
}

/**
 * A fixed-height block of text lines, scrolled: never taller than its height
 * (no flicker). Every view of agent text (live pane, log, files, details,
 * diffs) draws through here, so each line shown has its control characters
 * escaped (src/text/sanitize.ts): only the lines on screen, once per frame.
 */
export function Lines({ lines, width, height, scroll = 0, tail = false, color }: LinesProps) {
  const max = Math.max(0, lines.length - height);
  const start = tail ? Math.max(0, max - scroll) : Math.min(scroll, max);
  const shown = lines.slice(start, start + height);
  return (
    <Box flexDirection="column" width={width} height={height}>
      {shown.map((l, i) => (
        <Text key={start + i} wrap="truncate-end" color={color?.(l)}>
          {visibleText(l) || ' '}
        </Text>
      ))}
    </Box>
  );
}
