// The floor of the dashboard's CPU while jobs stream (bench/scale.bench.js):
// the least a process can do to follow every job's transcript and event log,
// a recursive fs.watch on the jobs dir that reads and parses each appended
// line. Prints its CPU over `ms` milliseconds as a percentage of one core.
import { closeSync, openSync, readSync, watch } from 'node:fs';
import { join } from 'node:path';

const [jobsDir, ms] = process.argv.slice(2);
const offsets = new Map();
const buf = Buffer.alloc(1 << 20);
function readNew(path) {
  let fd;
  try {
    fd = openSync(path, 'r');
  } catch {
    return;
  }
  try {
    let at = offsets.get(path) ?? 0;
    let rest = '';
    for (let n; (n = readSync(fd, buf, 0, buf.length, at)) > 0; at += n) {
      const lines = (rest + buf.toString('utf8', 0, n)).split('\n');
      rest = lines.pop();
      for (const l of lines) if (l) JSON.parse(l);
    }
    offsets.set(path, at - Buffer.byteLength(rest));
  } finally {
    closeSync(fd);
  }
}
const w = watch(jobsDir, { recursive: true }, (_e, name) => {
  if (name?.endsWith('.jsonl')) readNew(join(jobsDir, name));
});
// Start from the end of what is there: only the window's appends are followed.
await new Promise((r) => setTimeout(r, 200));
const c0 = process.cpuUsage();
const t0 = performance.now();
await new Promise((r) => setTimeout(r, Number(ms)));
const c = process.cpuUsage(c0);
const wall = performance.now() - t0;
w.close();
process.stdout.write(`${((c.user + c.system) / 1000 / wall) * 100}\n`);
