import { Box } from 'ink';
import type { ColumnData } from '../src/live/board.js';
import { Column } from './Column.js';

export interface BoardProps {
  columns: ColumnData[];
  cursor: { col: number; row: number };
  width: number;
  height: number;
  color: boolean;
}

/**
 * Column widths: an empty column gets just room for its title, the others
 * share the rest, so cards stay readable at 80 columns.
 */
export function columnWidths(counts: number[], width: number): number[] {
  const n = Math.max(1, counts.length);
  const even = Math.floor(width / n);
  const full = counts.filter((c) => c > 0).length;
  if (full === 0 || full === n) return counts.map(() => even);
  // Empty columns share at most ~45% of the width, 8 to 12 columns each.
  const narrow = Math.min(even, Math.max(8, Math.min(12, Math.floor((width * 0.45) / (n - full)))));
  const wide = Math.floor((width - narrow * (n - full)) / full);
  return counts.map((c) => (c > 0 ? wide : narrow));
}

/** A kanban: columns side by side, sharing the width. */
export function Board({ columns, cursor, width, height, color }: BoardProps) {
  const widths = columnWidths(
    columns.map((c) => c.cards.length),
    width,
  );
  return (
    <Box flexDirection="row" width={width} height={height}>
      {columns.map((c, i) => (
        <Column
          key={c.title}
          column={c}
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
