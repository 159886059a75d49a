// A standby runner's load must not slow the start of the job handed the
// standby before it: where Linux schedules each session as one (autogroups),
// ii run starts its session at the floor (19), and the standby raises it to
// its own nice value, the jobs' level ([run] nice), after STANDBY_LOW_MS, or
// as it is handed a todo. Run as root only: Linux refuses a person's session
// changes past one a tenth of a second, machine-wide (the tests running beside
// this one make them too), and ii run's first write is not retried.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { spawnStandbyJob } from '../../src/job/detached.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { traceMarks } from '../helpers/trace.js';

let tmp: ReturnType<typeof tempDir> | null = null;
afterEach(() => {
  vi.unstubAllEnvs();
  tmp?.cleanup();
  tmp = null;
});

const sessionNiceOf = (pid: number) =>
  Number(/nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'))?.[1]);

/** The jobs' level for --nice 5 (the standby's own nice value). */
const level = Math.min(19, getPriority() + 5);

let root = '';
function standby() {
  if (!tmp) {
    tmp = tempDir('ii-standby-nice-');
    mkdirSync(join(tmp.path, 'repo'));
    root = gitRepo(join(tmp.path, 'repo'));
    vi.stubEnv('II_TRACE', join(tmp.path, 'trace.jsonl'));
  }
  const s = spawnStandbyJob({ root, slug: 'r' }, join(tmp.path, 'state', 'incrementum'), { nice: 5 });
  const exit = new Promise((r) => s.child.once('exit', r));
  let exited = false;
  void exit.then(() => (exited = true));
  return { s, exit, exited: () => exited };
}

const marks = (pid: number) => traceMarks(join(tmp!.path, 'trace.jsonl'), pid);

it.skipIf(!existsSync('/proc/self/autogroup') || process.getuid?.() !== 0)(
  'a standby starts with its session at the floor and raises it to the jobs’ level after a while, or as it is handed a todo',
  async () => {
    const a = standby();
    try {
      expect(sessionNiceOf(a.s.pid)).toBe(19);
      await waitFor(() => sessionNiceOf(a.s.pid) === level, 'its session raised', 10_000);
    } finally {
      a.s.dismiss();
      await a.exit;
    }
    const b = standby();
    try {
      expect(sessionNiceOf(b.s.pid)).toBe(19);
      // A todo it will not find: it exits after, but its session is raised as it reads it.
      b.s.handOver('nothing-here');
      await b.exit;
      const handed = marks(b.s.pid).find((m) => m.mark === 'handed');
      expect(handed?.session_nice).toBe(level);
    } finally {
      if (!b.exited()) b.s.child.kill('SIGKILL');
    }
  },
);
