// Text laid out in terminal cells, as Ink measures it (string-width, which
// Ink itself uses), not in UTF-16 units: a CJK character or an emoji takes
// two cells, a combining mark none. A view that counts `.length` puts a
// wide line on one row that the terminal draws on two, and the rows below
// it are pushed down over what follows (the `l` log overlapped lines so).
import stringWidth from 'string-width';

/** The tab stops a terminal uses, so an expanded tab lands where `ii job logs`' would. */
const TAB = 8;

/** Printable ASCII only: one cell per character, nothing to measure. */
const PLAIN = /^[\x20-\x7e]*$/;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The cells a one-line string takes on a terminal. */
export const cellWidth = (s: string): number => (PLAIN.test(s) ? s.length : stringWidth(s));

/** Tabs as the spaces a terminal moves over (stops every 8 cells), so the width counts them. */
export function expandTabs(line: string): string {
  if (!line.includes('\t')) return line;
  let out = '';
  let col = 0;
  for (const part of line.split(/(\t)/)) {
    if (part === '\t') {
      const n = TAB - (col % TAB);
      out += ' '.repeat(n);
      col += n;
    } else {
      out += part;
      col += cellWidth(part);
    }
  }
  return out;
}

/**
 * One line (no newline in it, tabs expanded) as rows of at most `width`
 * cells, cut anywhere like a pager's wrap, so every character is kept and in
 * order. A wide character that would straddle the edge starts the next row.
 */
export function hardWrap(line: string, width: number): string[] {
  if (width <= 0) return [line];
  if (PLAIN.test(line)) {
    if (line.length <= width) return [line];
    const rows: string[] = [];
    for (let i = 0; i < line.length; i += width) rows.push(line.slice(i, i + width));
    return rows;
  }
  if (stringWidth(line) <= width) return [line];
  const rows: string[] = [];
  let row = '';
  let used = 0;
  for (const { segment } of graphemes.segment(line)) {
    const w = stringWidth(segment);
    if (used + w > width && row) {
      rows.push(row);
      row = '';
      used = 0;
    }
    row += segment;
    used += w;
  }
  rows.push(row);
  return rows;
}

/** How many rows hardWrap would make, without making them (for a long log's line count). */
export function rowCount(line: string, width: number): number {
  if (width <= 0) return 1;
  if (PLAIN.test(line)) return Math.max(1, Math.ceil(line.length / width));
  return hardWrap(line, width).length;
}

/**
 * One line word-wrapped to rows of at most `width` cells, broken at spaces
 * (a word longer than a row is cut), for text read as sentences: a reason.
 */
export function wordWrap(line: string, width: number): string[] {
  const text = expandTabs(line);
  if (width <= 0 || cellWidth(text) <= width) return [text];
  const rows: string[] = [];
  let row = '';
  for (const word of text.split(' ')) {
    const next = row ? `${row} ${word}` : word;
    if (cellWidth(next) <= width) {
      row = next;
      continue;
    }
    if (row) rows.push(row);
    const cut = hardWrap(word, width);
    row = cut.pop()!;
    rows.push(...cut);
  }
  if (row || rows.length === 0) rows.push(row);
  return rows;
}
