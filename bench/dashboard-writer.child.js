// The "other process" of the dashboard benchmark: on each line of stdin it
// makes one job mutation (or appends to a watched file, for the floor) and
// prints the wall-clock time the write completed (comparable across
// processes: performance.timeOrigin is wall-clock).
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [dist, stateDir, jobId, floorFile] = process.argv.slice(2);
const { openStateStore } = await import(`${dist}/src/state/index.js`);
const store = openStateStore({ dir: stateDir });
const stages = ['testing', 'reviewing', 'committing', 'implementing'];
let i = 0;
const now = () => performance.timeOrigin + performance.now();
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'floor') appendFileSync(floorFile, 'x\n');
  else if (line === 'stage') store.jobs.setStage(jobId, stages[i++ % stages.length]);
  else throw new Error(`unknown command ${line}`);
  process.stdout.write(`${now()}\n`);
}
// stdin closed: the benchmark is done.
store.close();
