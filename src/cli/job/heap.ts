// A job's runner spends its life waiting on its agent, but an agent that
// floods (hundreds of thousands of session updates in a turn) has it parse
// and record as fast as it can; V8 then grows its young generation towards
// 32 MB semi-spaces and keeps them. Optimising for size (as the dashboard
// does, src/cli/dashboard/heap.ts) keeps the heap near what is live: with
// 800,000 updates in one turn the runner's peak RSS went from 192 to 127 MB
// (bench/flood.bench.js; 99 MB with no flood), for ~15% more CPU while the
// flood lasts. Set for every runner: ii job do, ii job retry, ii run's.
import { setFlagsFromString } from 'node:v8';

let done = false;

export function tuneHeapForRunner(): void {
  if (done) return;
  done = true;
  setFlagsFromString('--optimize-for-size');
}
