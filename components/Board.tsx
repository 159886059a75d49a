import { Box } from 'ink';
import type { ColumnData } from '../src/dashboard/view/board.js';
import { Column, columnName, shortNames } from './Column.js';

export interface BoardProps {
  columns: ColumnData[];
  cursor: { col: number; row: number };
  width: number;
  height: number;
  color: boolean;
}

/**
 * Column widths: an empty column gets room for its name, the others share
 * the rest, so the cards that are there get the width to be read.
 */
export function columnWidths(counts: number[], width: number, names?: string[]): number[] {
  const n = Math.max(1, counts.length);
  const even = Math.floor(width / n);
  const full = counts.filter((c) => c > 0).length;
  if (full === 0 || full === n) return counts.map(() => even);
  // An empty column's name and a space; together at most half the width.
  const room = counts.map((c, i) => (c > 0 ? 0 : (names?.[i]?.length ?? 10) + 2));
  const cap =
    room.reduce((a, b) => a + b, 0) <= width / 2 ? Infinity : Math.max(4, Math.floor(width / 2 / (n - full)));
  const narrow = room.map((r) => Math.min(cap, r));
  const wide = Math.floor((width - narrow.reduce((a, b) => a + b, 0)) / full);
  return counts.map((c, i) => (c > 0 ? wide : narrow[i]!));
}

/** A kanban: columns side by side, sharing the width. */
export function Board({ columns, cursor, width, height, color }: BoardProps) {
  const short = shortNames(
    columns.map((c) => c.title),
    width,
  );
  const widths = columnWidths(
    columns.map((c) => c.cards.length),
    width,
    columns.map((c) => columnName(c.title, short)),
  );
  return (
    <Box flexDirection="row" width={width} height={height}>
      {columns.map((c, i) => (
        <Column
          key={c.title}
          column={c}
          short={short}
          width={widths[i]!}
          height={height}
          selectedRow={i === cursor.col && c.cards.length > 0 ? cursor.row : null}
          focused={i === cursor.col}
          color={color}
        />
      ))}
    </Box>
  );
}
