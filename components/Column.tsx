import { Box, Text } from 'ink';
import type { ColumnData } from '../src/dashboard/view/board.js';
import { Card, cardHeight } from './Card.js';

export interface ColumnProps {
  column: ColumnData;
  /** The board's choice of names (shortNames). */
  short: boolean;
  /** Lines each card's title takes (the board's choice, the same in every column). */
  titleLines?: number;
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

/**
 * Short names for narrow boards, distinct within each board: cut to a few
 * letters, Committing, Committed and Completed would all read "Com…", and
 * Reviewing and Rejected "Re…".
 */
const SHORT: Record<string, string> = {
  Backlog: 'Todo',
  Implementing: 'Impl',
  Testing: 'Test',
  Reviewing: 'Rev',
  Committing: 'Commit',
  Committed: 'Done',
  Completed: 'Done',
  Landed: 'Land',
  Failed: 'Fail',
  Abandoned: 'Aband',
  Rejected: 'Rej',
  Accepted: 'Acc',
};

/** Room a count takes after a name: " (999)". */
const COUNT_ROOM = 6;

/**
 * Whether a board of these columns uses the short names at this width. It
 * depends on the width and the column names only, never on the counts: a
 * name that changed whenever a job moved ("Te… (0)", then "Test (1)") was
 * read as a different column every second.
 */
export function shortNames(titles: string[], width: number): boolean {
  return titles.reduce((n, t) => n + t.length + COUNT_ROOM + 1, 0) > width;
}

/** A column's name in the form the board chose. */
export const columnName = (title: string, short: boolean): string =>
  short ? (SHORT[title] ?? title) : title;

/** "Name (n)"; an empty column is its name alone (dimmed), so it takes little room. */
export function columnTitle(title: string, n: number, short: boolean): string {
  const name = columnName(title, short);
  return n > 0 ? `${name} (${n})` : name;
}

export function Column({
  column,
  short,
  titleLines = 1,
  width,
  height,
  selectedRow,
  focused,
  color,
}: ColumnProps) {
  const n = column.cards.length;
  // One line for the title, one kept for "+N more".
  const fits = Math.max(1, Math.floor((height - 2) / cardHeight(titleLines)));
  const start = windowStart(n, fits, selectedRow);
  const shown = column.cards.slice(start, start + fits);
  const above = start;
  const below = n - start - shown.length;
  const more = [above ? `↑${above}` : '', below ? `↓${below} more` : ''].filter(Boolean).join(' ');
  return (
    <Box flexDirection="column" width={width} height={height} paddingRight={1}>
      <Text bold={n > 0} dimColor={n === 0} underline={focused} wrap="truncate-end">
        {columnTitle(column.title, n, short)}
      </Text>
      {shown.map((card, i) => (
        <Card
          key={card.key}
          card={card}
          selected={selectedRow === start + i}
          titleLines={titleLines}
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
