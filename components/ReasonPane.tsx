import { Box, Text } from 'ink';
import { reasonRows } from '../src/dashboard/view/card-reason.js';

export interface ReasonPaneProps {
  /** The pane's text (src/dashboard/view/card-reason.ts): a title line, then the reason. */
  text: string;
  width: number;
  height: number;
}

/** The selected card's whole reason under the jobs board, word-wrapped: what its card had to cut. */
export function ReasonPane({ text, width, height }: ReasonPaneProps) {
  const { title, rows } = reasonRows(text, width);
  const shown = rows.slice(0, Math.max(0, height - 1));
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold wrap="truncate-end">
        {title}
      </Text>
      {shown.map((r, i) => (
        <Text key={i} wrap="truncate-end">
          {r || ' '}
        </Text>
      ))}
    </Box>
  );
}
