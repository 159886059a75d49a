import { Box, Text } from 'ink';
import { logWindow } from '../src/dashboard/view/log-view.js';

export interface LogPaneProps {
  title: string;
  lines: string[];
  width: number;
  height: number;
  /** The first row shown, unless following the end. */
  top?: number;
  /** Show the end, and keep showing it as lines come (the live pane always does). */
  follow?: boolean;
  /** Say which rows are shown after the title, then these key hints (the `l` log). */
  hints?: string;
}

/**
 * A log in rows of the pane's width (src/dashboard/view/log-view.ts): the
 * live pane (the active job's latest agent messages and tool calls, newest at
 * the bottom) and the `l` log, scrolled like a pager. Every line is wrapped,
 * none cut or dropped, and each row is one terminal row.
 */
export function LogPane({ title, lines, width, height, top = 0, follow = true, hints }: LogPaneProps) {
  const rowsH = Math.max(1, height - 1);
  const win = logWindow(lines, width, rowsH, top, follow);
  const where =
    hints == null
      ? ''
      : ` · rows ${win.total ? win.top + 1 : 0}–${win.top + win.rows.length} of ${win.total}${
          win.top + win.rows.length >= win.total ? ' (end)' : ''
        } · ${hints}`;
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold wrap="truncate-end">
        {title}
        {where}
      </Text>
      {lines.length === 0 ? (
        <Box height={rowsH}>
          <Text dimColor>(no agent activity yet)</Text>
        </Box>
      ) : (
        <Box flexDirection="column" width={width} height={rowsH}>
          {win.rows.map((r, i) => (
            <Text key={win.top + i} wrap="truncate-end">
              {r || ' '}
            </Text>
          ))}
        </Box>
      )}
    </Box>
  );
}
