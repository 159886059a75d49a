// The "other process" of bench/scale.bench.js: on each line of stdin it makes
// one write and prints the wall-clock time the write completed (comparable
// across processes: performance.timeOrigin is wall-clock), then the id it
// wrote. `todo` writes a new todo (priority 0: the top of the Backlog column),
// `stage` moves a job to its next stage, `floor` appends to a watched file.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [dist, stateDir, repo, jobId, floorFile] = process.argv.slice(2);
const { openStateStore } = await import(`${dist}/src/state/index.js`);
const store = openStateStore({ dir: stateDir });
const stages = ['testing', 'reviewing', 'committing', 'implementing'];
let i = 0;
const now = () => performance.timeOrigin + performance.now();
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  let id = '';
  if (line === 'floor') appendFileSync(floorFile, 'x\n');
  else if (line === 'stage') store.jobs.setStage(jobId, stages[i++ % stages.length]);
  else if (line === 'todo') id = store.todos.create(repo, { title: `new todo ${i++}`, priority: 0 }).id;
  else throw new Error(`unknown command ${line}`);
  process.stdout.write(`${now()} ${id}\n`);
}
// stdin closed: the benchmark is done.
store.close();
