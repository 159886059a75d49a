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

/**
 * Runs of printable ASCII, and of anything else with the ASCII character
 * before it: a keycap (`1` U+FE0F U+20E3) or an accented `e` is one cluster
 * that starts in ASCII.
 */
const RUNS = /(?:[\x20-\x7e](?=[\x20-\x7e]|$))+|[\x20-\x7e]?[^\x20-\x7e]+/g;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** What can join characters into one cluster: marks (variation selectors, keycaps too), the joiner, skin tones, flags, jamo. */
const JOINS = /\p{M}|\u200d|\p{Emoji_Modifier}|\p{Regional_Indicator}|[\u1100-\u11ff]/u;

/** A run's grapheme clusters: its characters (code points), when none of them joins (most CJK text and emoji), without a segmenter. */
const clusters = (run: string): Iterable<string> =>
  JOINS.test(run) ? Array.from(graphemes.segment(run), (g) => g.segment) : run;

/**
 * Cells per cluster, remembered: string-width's emoji test takes ~27 µs a
 * call, and a log repeats the same few characters (kept below 10,000).
 */
const widths = new Map<string, number>();
function clusterWidth(c: string): number {
  let w = widths.get(c);
  if (w === undefined) {
    if (widths.size >= 10_000) widths.clear();
    w = stringWidth(c);
    widths.set(c, w);
  }
  return w;
}

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
  // Measured a run at a time: ASCII by its length, the rest a grapheme at a
  // time (measuring a whole long line grapheme by grapheme took 0.3 ms a
  // line, seconds for a big log).
  const rows: string[] = [];
  let row = '';
  let used = 0;
  for (const [run] of line.matchAll(RUNS)) {
    if (PLAIN.test(run)) {
      for (let i = 0; i < run.length;) {
        if (used >= width) {
          rows.push(row);
          row = '';
          used = 0;
        }
        const piece = run.slice(i, i + width - used);
        row += piece;
        used += piece.length;
        i += piece.length;
      }
      continue;
    }
    for (const segment of clusters(run)) {
      const w = clusterWidth(segment);
      if (used + w > width && row) {
        rows.push(row);
        row = '';
        used = 0;
      }
      row += segment;
      used += w;
    }
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
