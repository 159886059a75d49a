// The dashboard is a long-running process whose memory people watch (goal:
// ≤ 100 MB with 10,000 jobs). V8's defaults favour throughput: its young
// generation grows to tens of MB and the first load of thousands of jobs
// leaves the heap that large for the rest of the session. Optimising for size
// keeps RSS ~60 MB lower at 10,000 jobs (bench/dashboard.bench.js measures both).
// Set before the jobs are loaded; a small board that shows no log is given
// V8's own sizing back once they are (fitHeapToBoard).
import { setFlagsFromString } from 'node:v8';

/** How the board opens the SQLite store: a small page cache (state/sqlite/db.ts OpenOptions.cacheKb). */
export const BOARD_STORE_OPTIONS = { cacheKb: 256 } as const;

/** How the heap is sized: V8's way (not a board), for size (tuneHeapForDashboard), or V8's way again on a small board (fitHeapToBoard). */
export type HeapMode = 'default' | 'size' | 'speed';
let mode: HeapMode = 'default';
export const heapMode = (): HeapMode => mode;

/**
 * How far the old generation may grow past what a full GC left, in percent.
 * Optimising for size alone keeps it ~10% above that: a keypress's frame
 * allocates ~3.5 MB (Ink's output, measured at 1,000 jobs), some of which
 * lives long enough to be promoted, so a full GC of the whole board ran every
 * ten or so keypresses, and at 10,000 jobs they were a keypress's CPU p95 (39 ms,
 * against 20 ms with 20%; median 8.6 → 6.1 ms), for no more RSS after the
 * load's first frame (bench/dashboard.bench.js). 40% and more also halves the
 * CPU at 1,000 jobs, but keeps ~30 MB more once pressed.
 */
const GROWTH_PERCENT = 20;

function forSize(): void {
  mode = 'size';
  setFlagsFromString('--optimize-for-size');
  setFlagsFromString(`--heap-growing-percent=${GROWTH_PERCENT}`);
}

export function tuneHeapForDashboard(): void {
  if (mode === 'default') forSize();
}

/** Fewer jobs than this on the board, once loaded, and the heap is sized V8's way again (fitHeapToBoard). */
export const SMALL_BOARD_JOBS = 1000;

/**
 * Once the board's jobs are loaded, and as they and its loaded logs change:
 * a board of fewer than SMALL_BOARD_JOBS, with no job's log loaded, is sized
 * for speed (forSpeed); a larger one, or one showing a log, for size again.
 * Optimising for size keeps the young generation small, so a keypress's
 * frame (Ink's output, a few MB) went through several scavenges and promoted
 * more to the old generation, whose full GCs then landed in keypresses: GC
 * was a fifth of the CPU of three machines' boards of 24 to 50 jobs sharing
 * one 2-core box (bench/shared-store.bench.js). In two alternating pairs of
 * its runs the worst board's CPU p95 per keypress went from 15.5 and 17.2 ms
 * to 13.0 and 13.6, and its keypress → frame p95 from 27.1 and 37.7 ms to
 * 23.8 and 32.5. What it costs is memory: a 3-job board held ~17 MB more
 * after 100 keypresses (~104 MB, not ~87). At 10,000 jobs sizing for size
 * saves ~60 MB, and those boards keep it. A log once loaded (l, the commit
 * detail) stays loaded, read whole again as its job streams: sized for
 * speed, a board that had opened the log of a job streaming 400,000 updates
 * peaked at 340 to 365 MB, and at 145 to 162 MB sized for size from the
 * log's load (bench/flood.bench.js, whose goal is 150). Neither count ever
 * falls (jobs and loaded logs are kept), so a board is switched back to
 * size at most once. Left over: a small board showing only that job's live
 * pane peaks at 205 to 236 MB sized V8's way (135 for size). Neither
 * switching to size as the young generation grows (181 to 209 MB) nor
 * bounding it from the start (--max-semi-space-size=8: 187 MB) was enough:
 * the old generation grows too.
 */
export function fitHeapToBoard(jobs: number, logsLoaded = 0): void {
  if (mode === 'default') return; // not a board's process
  if (jobs >= SMALL_BOARD_JOBS || logsLoaded > 0) {
    if (mode !== 'size') forSize();
    return;
  }
  if (mode !== 'speed') forSpeed();
}

/** V8's own sizing: the young generation as large as V8 grows it, the old one as far past a full GC as V8 lets it. */
function forSpeed(): void {
  mode = 'speed';
  setFlagsFromString('--no-optimize-for-size');
  setFlagsFromString('--heap-growing-percent=0');
}

/** What followBoardSize reads of the board's state: its jobs, and the logs it has loaded. */
interface BoardSize {
  jobs: readonly unknown[];
  records?: Readonly<Record<string, unknown>>;
}

/** What followBoardSize watches: the board's store (dashboard/view/store.ts), or anything holding the same. */
interface BoardHolder {
  getState(): BoardSize;
  subscribe(listener: (state: BoardSize, prev: BoardSize) => void): () => void;
}

const fit = (s: BoardSize): void =>
  fitHeapToBoard(s.jobs.length, s.records ? Object.keys(s.records).length : 0);

/** fitHeapToBoard now, once the board's jobs are loaded, and again each time its jobs or loaded logs change; returns the unsubscribe. */
export function followBoardSize(board: BoardHolder): () => void {
  fit(board.getState());
  return board.subscribe((s, prev) => {
    if (s.jobs !== prev.jobs || s.records !== prev.records) fit(s);
  });
}
