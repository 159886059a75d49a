import { Box } from 'ink';
import type { ColumnData } from '../src/dashboard/view/board.js';
import { cardHeight } from './Card.js';
import { Column, columnName, shortNames } from './Column.js';
import { visibleLine } from '../src/text/sanitize.js';

export interface BoardProps {
  columns: ColumnData[];
  cursor: { col: number; row: number };
  width: number;
  height: number;
  color: boolean;
}

/** The most of the width empty columns' names may take together. */
const EMPTY_SHARE = 0.625;

/**
 * Column widths: an empty column gets room for its name, the others share
 * the rest, so the cards that are there get the width to be read.
 */
export function columnWidths(counts: number[], width: number, names?: string[]): number[] {
  const n = Math.max(1, counts.length);
  const even = Math.floor(width / n);
  const full = counts.filter((c) => c > 0).length;
  if (full === 0 || full === n) return counts.map(() => even);
  // An empty column's name and a space; together at most EMPTY_SHARE of the
  // width: at 80 columns the jobs board's eight short names all fit beside
  // one column of cards 30 wide.
  const room = counts.map((c, i) => (c > 0 ? 0 : (names?.[i]?.length ?? 10) + 2));
  const share = width * EMPTY_SHARE;
  const cap =
    room.reduce((a, b) => a + b, 0) <= share ? Infinity : Math.max(4, Math.floor(share / (n - full)));
  const narrow = room.map((r) => Math.min(cap, r));
  const wide = Math.floor((width - narrow.reduce((a, b) => a + b, 0)) / full);
  return counts.map((c, i) => (c > 0 ? wide : narrow[i]!));
}

/** How a board lays out at a width: its names, its columns' widths, and what its cards need. */
export interface BoardLayout {
  short: boolean;
  widths: number[];
  /** Some card's title is cut on one line. */
  cut: boolean;
  /** Lines the board needs to show every card, with titles of `titleLines` lines. */
  needs: (titleLines: number) => number;
}

/**
 * The last layout per board (boardColumns keeps a board's columns while its
 * cards are unchanged): a keypress that only moves the cursor does not measure
 * every title again (10,000 todos in the Backlog column: bench/scale.bench.js).
 */
const layouts = new WeakMap<ColumnData[], { width: number; layout: BoardLayout }>();

export function boardLayout(columns: ColumnData[], width: number): BoardLayout {
  const memo = layouts.get(columns);
  if (memo && memo.width === width) return memo.layout;
  const layout = measureBoard(columns, width);
  layouts.set(columns, { width, layout });
  return layout;
}

function measureBoard(columns: ColumnData[], width: number): BoardLayout {
  const short = shortNames(
    columns.map((c) => c.title),
    width,
  );
  const widths = columnWidths(
    columns.map((c) => c.cards.length),
    width,
    columns.map((c) => columnName(c.title, short)),
  );
  // A card is its column's width less the column's right padding.
  const cut = columns.some((c, i) => c.cards.some((card) => visibleLine(card.title).length > widths[i]! - 1));
  const most = Math.max(0, ...columns.map((c) => c.cards.length));
  // The names row, the cards, and the row a "more" line would take.
  return { short, widths, cut, needs: (lines) => 2 + most * cardHeight(lines) };
}

/** Two-line titles when some title is cut and every card still fits at that height. */
export const titleLinesFor = (layout: BoardLayout, height: number): number =>
  layout.cut && layout.needs(2) <= height ? 2 : 1;

/** A kanban: columns side by side, sharing the width. */
export function Board({ columns, cursor, width, height, color }: BoardProps) {
  const layout = boardLayout(columns, width);
  const titleLines = titleLinesFor(layout, height);
  return (
    <Box flexDirection="row" width={width} height={height}>
      {columns.map((c, i) => (
        <Column
          key={c.title}
          column={c}
          short={layout.short}
          titleLines={titleLines}
          width={layout.widths[i]!}
          height={height}
          selectedRow={i === cursor.col && c.cards.length > 0 ? cursor.row : null}
          focused={i === cursor.col}
          color={color}
        />
      ))}
    </Box>
  );
}
