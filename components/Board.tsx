import { Box, Text } from 'ink';
import type { CardData, ColumnData } from '../src/dashboard/view/board.js';
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

/**
 * A place on the board, side by side with the others: one column, or a run
 * of empty columns collapsed into a narrow stack of their names and counts.
 */
export interface Slot {
  columns: number[];
  width: number;
  stack: boolean;
}

/** How a board lays out at a width: its names, its columns' widths, and what its cards need. */
export interface BoardLayout {
  short: boolean;
  widths: number[];
  slots: Slot[];
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

/** Each card's title as shown, measured once: the board keeps the cards of what did not change. */
const titleWidths = new WeakMap<CardData, number>();
function titleWidth(card: CardData): number {
  if (card.titleWidth !== undefined) return card.titleWidth;
  let w = titleWidths.get(card);
  if (w === undefined) titleWidths.set(card, (w = visibleLine(card.title).length));
  return w;
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
  const slots = short ? collapse(columns, width, short) : null;
  if (slots) for (const slot of slots) for (const i of slot.columns) widths[i] = slot.width;
  // A card is its column's width less the column's right padding.
  const cut = columns.some((c, i) => c.cards.some((card) => titleWidth(card) > widths[i]! - 1));
  const most = Math.max(0, ...columns.map((c) => c.cards.length));
  const stacked = Math.max(0, ...(slots ?? []).map((s) => (s.stack ? s.columns.length : 0)));
  return {
    short,
    widths,
    slots: slots ?? widths.map((w, i) => ({ columns: [i], width: w, stack: false })),
    cut,
    // The names row, the cards, and the row a "more" line would take; a stack's names.
    needs: (lines) => Math.max(2 + most * cardHeight(lines), stacked),
  };
}

/** An empty column's line in a stack: its name and its count. */
const stackLine = (title: string, short: boolean) => `${columnName(title, short)} 0`;

/**
 * At a narrow width (short names), each run of empty columns is one narrow
 * stack of "Impl 0" lines, so the columns with cards get the width: at 80
 * columns, nine columns left a failed job's card 18 cells. In board order, so
 * the pipeline still reads left to right. Null when no column is empty, or
 * every one is (nothing to give the room to).
 */
function collapse(columns: ColumnData[], width: number, short: boolean): Slot[] | null {
  const full = columns.filter((c) => c.cards.length > 0).length;
  if (full === 0 || full === columns.length) return null;
  const slots: Slot[] = [];
  columns.forEach((c, i) => {
    const last = slots.at(-1);
    if (c.cards.length > 0) slots.push({ columns: [i], width: 0, stack: false });
    else if (last?.stack) last.columns.push(i);
    else slots.push({ columns: [i], width: 0, stack: true });
  });
  for (const slot of slots)
    if (slot.stack)
      slot.width = 2 + Math.max(...slot.columns.map((i) => stackLine(columns[i]!.title, short).length));
  const rest = width - slots.reduce((n, sl) => n + sl.width, 0);
  const wide = Math.max(4, Math.floor(rest / full));
  for (const slot of slots) if (!slot.stack) slot.width = wide;
  return slots;
}

/** A run of empty columns: their names and counts, one a line, dimmed. */
function Stack({
  titles,
  short,
  width,
  height,
}: {
  titles: string[];
  short: boolean;
  width: number;
  height: number;
}) {
  const fits = titles.length <= height ? titles.length : Math.max(0, height - 1);
  const rest = titles.length - fits;
  return (
    <Box flexDirection="column" width={width} height={height} paddingRight={2}>
      {titles.slice(0, fits).map((t) => (
        <Text key={t} dimColor wrap="truncate-end">
          {stackLine(t, short)}
        </Text>
      ))}
      {rest > 0 ? (
        <Text dimColor wrap="truncate-end">
          +{rest} 0
        </Text>
      ) : null}
    </Box>
  );
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
      {layout.slots.map((slot) => {
        const i = slot.columns[0]!;
        const c = columns[i]!;
        return slot.stack ? (
          <Stack
            key={c.title}
            titles={slot.columns.map((k) => columns[k]!.title)}
            short={layout.short}
            width={slot.width}
            height={height}
          />
        ) : (
          <Column
            key={c.title}
            column={c}
            short={layout.short}
            titleLines={titleLines}
            width={slot.width}
            height={height}
            selectedRow={i === cursor.col && c.cards.length > 0 ? cursor.row : null}
            focused={i === cursor.col}
            color={color}
          />
        );
      })}
    </Box>
  );
}
