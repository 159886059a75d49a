// A standby runner's load must not slow the start of the job handed the
// standby before it: where Linux schedules each session as one (autogroups),
// its session is at the floor (19) for STANDBY_LOW_MS, then at the jobs' level
// ([run] nice), at once when it is handed a todo.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { spawnStandbyJob } from '../../src/job/detached.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir> | null = null;
afterEach(() => {
  tmp?.cleanup();
  tmp = null;
});

const sessionNiceOf = (pid: number) =>
  Number(/nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'))?.[1]);

const level = Math.min(19, getPriority() + 5);

let root = '';
function standby() {
  if (!tmp) {
    tmp = tempDir('ii-standby-nice-');
    mkdirSync(join(tmp.path, 'repo'));
    root = gitRepo(join(tmp.path, 'repo'));
  }
  const s = spawnStandbyJob({ root, slug: 'r' }, join(tmp.path, 'state', 'incrementum'), { nice: 5 });
  const exit = new Promise((r) => s.child.once('exit', r));
  let exited = false;
  void exit.then(() => (exited = true));
  return { s, exited: () => exited, stop: async () => (s.dismiss(), await exit) };
}

it.skipIf(!existsSync('/proc/self/autogroup'))(
  'a standby starts with its session at the floor, raised to the jobs’ level after a while, or at once when handed a todo',
  async () => {
    const a = standby();
    try {
      await waitFor(() => sessionNiceOf(a.s.pid) === 19, 'its session at the floor');
      await waitFor(() => sessionNiceOf(a.s.pid) === level, 'its session raised', 10_000);
    } finally {
      await a.stop();
    }
    const b = standby();
    try {
      await waitFor(() => sessionNiceOf(b.s.pid) === 19, 'its session at the floor');
      // A todo it will not find: it exits after, but its session is raised as it is handed.
      b.s.handOver('nothing-here');
      await waitFor(() => b.exited() || sessionNiceOf(b.s.pid) === level, 'its session raised');
      expect(b.exited()).toBe(false);
    } finally {
      if (!b.exited()) b.s.child.kill('SIGKILL');
    }
  },
);
