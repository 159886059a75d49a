// The dashboard is a long-running process whose memory people watch (goal:
// ≤ 100 MB with 10,000 jobs). V8's defaults favour throughput: its young
// generation grows to tens of MB and the first load of thousands of jobs
// leaves the heap that large for the rest of the session. Optimising for size
// keeps RSS ~60 MB lower at 10,000 jobs for a cost keypresses do not feel
// (bench/dashboard.bench.js measures both). Set before the jobs are loaded.
import { setFlagsFromString } from 'node:v8';

let done = false;

export function tuneHeapForDashboard(): void {
  if (done) return;
  done = true;
  setFlagsFromString('--optimize-for-size');
}
