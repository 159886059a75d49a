// The dashboard is a long-running process whose memory people watch (goal:
// ≤ 100 MB with 10,000 jobs). V8's defaults favour throughput: its young
// generation grows to tens of MB and the first load of thousands of jobs
// leaves the heap that large for the rest of the session. Optimising for size
// keeps RSS ~60 MB lower at 10,000 jobs (bench/dashboard.bench.js measures both).
// Set before the jobs are loaded.
import { setFlagsFromString } from 'node:v8';

/** How the board opens the SQLite store: a small page cache (state/sqlite/db.ts OpenOptions.cacheKb). */
export const BOARD_STORE_OPTIONS = { cacheKb: 256 } as const;

let done = false;

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

export function tuneHeapForDashboard(): void {
  if (done) return;
  done = true;
  setFlagsFromString('--optimize-for-size');
  setFlagsFromString(`--heap-growing-percent=${GROWTH_PERCENT}`);
}
