// The dashboard is a long-running process whose memory people watch (goal:
// ≤ 100 MB with 10,000 jobs). V8's defaults favour throughput: its young
// generation grows to tens of MB and the first load of thousands of jobs
// leaves the heap that large for the rest of the session. Optimising for size
// keeps RSS ~60 MB lower at 10,000 jobs for a cost keypresses do not feel
// (bench/dashboard.bench.js measures both). Set before the jobs are loaded.
import { setFlagsFromString } from 'node:v8';

/** How the board opens the SQLite store: a small page cache (state/sqlite/db.ts OpenOptions.cacheKb). */
export const BOARD_STORE_OPTIONS = { cacheKb: 256 } as const;

let done = false;

export function tuneHeapForDashboard(): void {
  if (done) return;
  done = true;
  setFlagsFromString('--optimize-for-size');
}
