import { Box, Text } from 'ink';
import type { ColumnData } from '../src/live/board.js';
import { Card, CARD_HEIGHT } from './Card.js';

export interface ColumnProps {
  column: ColumnData;
  width: number;
  height: number;
  /** The selected row when the cursor is in this column. */
  selectedRow: number | null;
  focused: boolean;
  color: boolean;
}

/**
 * The first card shown so that the selected one is visible: only the cards
 * that fit are rendered (a column of 1,000 jobs renders a screenful).
 */
export function windowStart(count: number, fits: number, selected: number | null): number {
  if (count <= fits || selected == null) return 0;
  return Math.max(0, Math.min(count - fits, selected - Math.floor(fits / 2)));
}

/** "Title (n)", the title shortened rather than the count when narrow. */
/**
 * Short names for narrow columns, distinct within each board: cut to a few
 * letters, Committing, Committed and Completed would all read "Com…", and
 * Reviewing and Rejected "Re…".
 */
const SHORT: Record<string, string> = {
  Implementing: 'Impl',
  Testing: 'Test',
  Reviewing: 'Rev',
  Committing: 'Commit',
  Committed: 'Done',
  Completed: 'Done',
  Failed: 'Fail',
  Abandoned: 'Aband',
  Rejected: 'Rej',
  Accepted: 'Acc',
};

export function columnTitle(title: string, n: number, width: number): string {
  const count = ` (${n})`;
  if (title.length + count.length <= width) return title + count;
  const short = SHORT[title] ?? title;
  if (short.length + count.length <= width) return short + count;
  const room = Math.max(1, width - count.length - 1);
  return `${short.slice(0, room)}…${count}`;
}

export function Column({ column, width, height, selectedRow, focused, color }: ColumnProps) {
  const n = column.cards.length;
  // One line for the title, one kept for "+N more".
  const fits = Math.max(1, Math.floor((height - 2) / CARD_HEIGHT));
  const start = windowStart(n, fits, selectedRow);
  const shown = column.cards.slice(start, start + fits);
  const above = start;
  const below = n - start - shown.length;
  const more = [above ? `↑${above}` : '', below ? `↓${below} more` : ''].filter(Boolean).join(' ');
  return (
    <Box flexDirection="column" width={width} height={height} paddingRight={1}>
      <Text bold underline={focused} wrap="truncate-end">
        {columnTitle(column.title, n, width - 1)}
      </Text>
      {shown.map((card, i) => (
        <Card
          key={card.key}
          card={card}
          selected={selectedRow === start + i}
          width={width - 1}
          color={color}
        />
      ))}
      {more ? (
        <Text dimColor wrap="truncate-end">
          {more}
        </Text>
      ) : null}
    </Box>
  );
}
