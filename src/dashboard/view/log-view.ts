// The `l` log and the live pane as a pager's rows: every line `ii job logs`
// prints, split at its newlines (a test's output or a reason is one entry of
// many lines), tabs expanded, control characters escaped, then cut into rows
// of the pane's width in terminal cells. Scrolling counts these rows, so no
// line is drawn past its pane (dropping the last ones) or over another.
import { expandTabs, hardWrap, rowCount } from '../../text/cells.js';
import { visibleText } from '../../text/sanitize.js';
import { selectedJob } from './board.js';
import type { DashboardState } from './state.js';

/** Printable ASCII with no newline: one row per `width` characters. */
const PLAIN = /^[\x20-\x7e]*$/;

/** One log entry as the rows it takes at a width. */
export function entryRows(entry: string, width: number): string[] {
  if (PLAIN.test(entry)) return hardWrap(entry, width);
  return visibleText(entry)
    .split('\n')
    .flatMap((l) => hardWrap(expandTabs(l), width));
}

const entryRowCount = (entry: string, width: number): number =>
  PLAIN.test(entry) ? rowCount(entry, width) : entryRows(entry, width).length;

/** Where each entry's rows start (one more slot: the total), per lines and width. */
interface RowIndex {
  width: number;
  starts: Int32Array;
}

/**
 * The last index per lines array: the log is re-read as a new array, and a
 * keypress or a frame on the same one measures nothing again (a log near the
 * transcript cap has hundreds of thousands of lines). Four bytes an entry.
 */
const indexes = new WeakMap<string[], RowIndex>();

/**
 * The last log indexed: a re-read log (every 250 ms and more while its job
 * runs) is mostly the same lines with more at the end, so the rows of the
 * lines it shares with the last one are not measured again.
 */
let last: { lines: WeakRef<string[]>; width: number; starts: Int32Array } | null = null;

function rowIndex(lines: string[], width: number): Int32Array {
  const memo = indexes.get(lines);
  if (memo && memo.width === width) return memo.starts;
  const starts = new Int32Array(lines.length + 1);
  let from = 0;
  // Held weakly: a log the board let go of (its view closed) is not kept alive here.
  const prev = last?.width === width ? last.lines.deref() : undefined;
  if (prev && last) {
    const n = Math.min(prev.length, lines.length);
    while (from < n && prev[from] === lines[from]) from++;
    starts.set(last.starts.subarray(0, from + 1));
  }
  for (let i = from; i < lines.length; i++) starts[i + 1] = starts[i]! + entryRowCount(lines[i]!, width);
  indexes.set(lines, { width, starts });
  last = { lines: new WeakRef(lines), width, starts };
  return starts;
}

/** The rows a log takes at a width. */
export const logRowTotal = (lines: string[], width: number): number => rowIndex(lines, width)[lines.length]!;

/** What a log pane shows: its rows from `top`, the top row clamped, and the total. */
export interface LogWindow {
  rows: string[];
  top: number;
  total: number;
}

/**
 * The rows of a pane `height` rows tall at `top` (following the end when
 * `follow`): only the entries on screen are cut into rows.
 */
export function logWindow(
  lines: string[],
  width: number,
  height: number,
  top: number,
  follow: boolean,
): LogWindow {
  const starts = rowIndex(lines, width);
  const total = starts[lines.length]!;
  const max = Math.max(0, total - height);
  const first = follow ? max : Math.max(0, Math.min(top, max));
  // The entry holding row `first`: the last whose start is at or before it.
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= first) lo = mid;
    else hi = mid - 1;
  }
  const rows: string[] = [];
  for (let i = lo; i < lines.length && rows.length < height; i++) {
    const r = entryRows(lines[i]!, width);
    const skip = i === lo ? first - starts[i]! : 0;
    rows.push(...r.slice(skip, skip + height - rows.length));
  }
  return { rows, top: first, total };
}

/** The lines of the `l` log: the job's whole log once loaded, its live lines until then. */
export function logLines(s: DashboardState): string[] {
  const job = selectedJob(s);
  if (!job) return NO_LINES;
  return s.records[job.id]?.log ?? s.live[job.id] ?? NO_LINES;
}

const NO_LINES: string[] = [];

/** Where a pager key moves the log to. */
export type LogMove = 'up' | 'down' | 'pageUp' | 'pageDown' | 'top' | 'end';

/**
 * The log's top row after a key, and whether it follows the end: j and k one
 * row, PgUp and PgDn a page, g the top, G the end. Reaching the end by any of
 * them follows it again, as new lines of a running job come in.
 */
export function moveLog(s: DashboardState, to: LogMove): { scroll: number; follow: boolean } {
  const { width, height } = s.logSize;
  const total = logRowTotal(logLines(s), width);
  const max = Math.max(0, total - height);
  const top = s.nav.follow ? max : Math.min(s.nav.scroll, max);
  const page = Math.max(1, height);
  const next =
    to === 'top' ? 0 : to === 'end' ? max : top + { up: -1, down: 1, pageUp: -page, pageDown: page }[to];
  const scroll = Math.max(0, Math.min(max, next));
  return { scroll, follow: scroll >= max };
}
