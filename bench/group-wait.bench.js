// Waiting for a process group to end (src/proc/group.ts waitGroupGone): a
// runner does it for its agent after EOF, for each test command's leftovers,
// and for every group it stops, asking every 20 ms. On a machine running
// many jobs (OTHERS processes beside it), the CPU that waiting takes per
// second. Floor, in the same run: one look at a group through all of /proc
// (groupAlive), which each 20 ms ask used to be.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, round } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { groupAlive, signalGroup, waitGroupGone } = await import(
  join(root, 'dist', 'src', 'proc', 'group.js')
);

/** Processes beside the waiting runner: about what 3 machines' 24 jobs make on one box. */
const OTHERS = 300;
const ROUNDS = 3;

const cpuMs = (c) => (c.user + c.system) / 1000;

export async function run() {
  const others = [];
  try {
    for (let i = 0; i < OTHERS; i++)
      others.push(spawn('sleep', ['600'], { stdio: 'ignore', detached: true }).pid);
    const looks = [];
    for (let i = 0; i < 10; i++) {
      const c0 = process.cpuUsage();
      groupAlive(others[0]);
      looks.push(cpuMs(process.cpuUsage(c0)));
    }
    const perSecond = [];
    for (let i = 0; i < ROUNDS; i++) {
      const g = spawn('sleep', ['1'], { stdio: 'ignore', detached: true });
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      if (!(await waitGroupGone(g.pid, 10_000))) throw new Error('the group did not end');
      perSecond.push(cpuMs(process.cpuUsage(c0)) / ((performance.now() - t0) / 1000));
    }
    const floor = median(looks);
    return [
      {
        name: `waiting for a process group to end, ${OTHERS} other processes: CPU per second of waiting, median of ${ROUNDS}`,
        value: round(median(perSecond), 1),
        unit: 'ms',
        floor: round(floor, 2),
        ratio: round(median(perSecond) / floor),
        goal: 'report (floor: one look through all of /proc)',
      },
    ];
  } finally {
    for (const pid of others) signalGroup(pid, 'SIGKILL');
  }
}
