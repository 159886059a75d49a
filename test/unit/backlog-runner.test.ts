// The backlog runner's view (what ii run draws under each line): a job that
// ended is out of it, and counted, by the time its end is told.
import { spawn, type ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BacklogRunner, type BacklogSnapshot } from '../../src/backlog/scheduler.js';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { tempDir } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
const children: ChildProcess[] = [];
beforeEach(() => {
  tmp = tempDir();
  store = openStateStore({ dir: join(tmp.path, 'incrementum') });
});
afterEach(() => {
  for (const c of children) c.kill('SIGKILL');
  store.close();
  tmp.cleanup();
});

it('a job that ended is out of the view, and counted done, when its end is told', async () => {
  const todo = store.todos.create('r', { title: 'A' });
  let jobId = '';
  let ended = false;
  const seenAtEnd: BacklogSnapshot[] = [];
  const runner: BacklogRunner = new BacklogRunner({
    store: asyncStore(store),
    finishSession: async () => {},
    repo: { root: tmp.path, slug: 'r' },
    slots: 1,
    maxAttempts: 2,
    pollMs: 20,
    // A runner stand-in: a real process that lives until its stdin ends, and its job, reviewing.
    start: (t) => {
      const c = spawn(
        process.execPath,
        ['-e', 'process.stdin.resume(); process.stdin.on("end", () => process.exit(0))'],
        {
          stdio: ['pipe', 'ignore', 'ignore'],
        },
      );
      children.push(c);
      const job = store.jobs.claim('r', { todo_id: t.id, pid: c.pid!, host: hostname() }, () => null);
      store.jobs.setStage(job.id, 'reviewing');
      jobId = job.id;
      return { pid: c.pid!, log: join(tmp.path, 'run.log'), child: c };
    },
    onTick: (snap) => {
      // Once the view has seen it reviewing, the job completes and its runner exits.
      if (ended || snap.mine[0]?.job?.stage !== 'reviewing') return;
      ended = true;
      store.jobs.finish(jobId, 'completed');
      store.todos.setStatus('r', todo.id, 'done');
      children[0]!.stdin!.end();
    },
    onEvent: (e) => {
      if (e.kind === 'ended') seenAtEnd.push(runner.snapshot());
    },
  });
  const r = await runner.run();
  expect(r.completed).toEqual([jobId]);
  expect(seenAtEnd).toHaveLength(1);
  expect(seenAtEnd[0]!.mine).toEqual([]);
  expect(seenAtEnd[0]!.completed).toBe(1);
});
