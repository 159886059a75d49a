// A runner killed after its job ended and before it ended the job's
// session left the todo in progress with no job on it: ii run and the
// board reap only active jobs, so only ii workspace prune freed it, and a
// run's todo stayed unfinished (run-chaos, seed 470758139, in CI). ii run
// ends such a session as the runner would have, once the runner is gone,
// and waits for a runner still ending it; ii todo list and ii job list do
// it for those they meet, and so does the board.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BacklogRunner, type BacklogRunEvent } from '../../src/backlog/scheduler.js';
import { boardSettler } from '../../src/dashboard/io/reap.js';
import { DashboardSync } from '../../src/dashboard/io/sync.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { settleStrandedTodos } from '../../src/job/stranded.js';
import type { JobBrief } from '../../src/model/backlog.js';
import { strandedJobs } from '../../src/model/stranded.js';
import { finishSession } from '../../src/session/session.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { openStateStore, repoSlug, type StateStore } from '../../src/state/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { GitVcs } from '../../src/vcs/git.js';
import { DEAD_PID, strandedJob as strandedJobIn } from '../helpers/stranded.js';
import { ii } from '../helpers/cli.js';
import { testEnv } from '../helpers/env.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let store: AsyncStateStore;
/** The same store, as the board reads it. */
let syncState: StateStore;
const vcs = new GitVcs();
const children: ChildProcess[] = [];
beforeEach(() => {
  tmp = tempDir('ii-stranded-todo-');
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'a.txt': 'one\n' });
  syncState = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
  store = asyncStore(syncState);
});
afterEach(async () => {
  for (const c of children) c.kill('SIGKILL');
  await store.close();
  tmp.cleanup();
});

const strandedJob = (status: 'completed' | 'failed', pid: number, slug = 'r') =>
  strandedJobIn(store, vcs, { root: repo, slug }, status, pid);
const endSession = async (id: string, outcome: 'done' | 'failed' = 'failed') => {
  await finishSession(store, id, outcome, vcs);
};

/** ii run's scheduler on the test's repository, its events kept; one that starts no job with `maxJobs` 0. */
function run(events: BacklogRunEvent[], o: { maxJobs?: number; onTick?: () => void } = {}) {
  return new BacklogRunner({
    store,
    repo: { root: repo, slug: 'r' },
    finishSession: endSession,
    slots: 1,
    maxAttempts: 2,
    pollMs: 20,
    onEvent: (e) => events.push(e),
    ...o,
  }).run();
}

it('which todos are stranded: in progress, no active job on it, by the job that ended last', () => {
  const brief = (id: string, todo_id: string, status: JobBrief['status'], started_at: string) => ({
    id,
    todo_id,
    status,
    started_at,
  });
  const todos = [
    { id: 'a', status: 'in_progress' as const },
    { id: 'b', status: 'in_progress' as const },
    { id: 'c', status: 'open' as const },
    { id: 'd', status: 'in_progress' as const },
  ];
  const briefs = [
    brief('a1', 'a', 'failed', '2026-01-01T00:00:01Z'),
    brief('a2', 'a', 'completed', '2026-01-01T00:00:02Z'),
    brief('b1', 'b', 'failed', '2026-01-01T00:00:03Z'),
    brief('b2', 'b', 'active', '2026-01-01T00:00:02Z'),
    brief('c1', 'c', 'failed', '2026-01-01T00:00:01Z'),
  ];
  // a: its last job ended; b is held by an active job; c is not in progress; d has no job.
  expect(strandedJobs(todos, briefs).map((j) => j.id)).toEqual(['a2']);
});

it('ii run ends the session of a completed job whose runner is gone: its todo done, its workspace freed', async () => {
  const { todo, job, sessionId } = await strandedJob('completed', DEAD_PID);
  const events: BacklogRunEvent[] = [];
  await run(events);
  expect((await store.todos.get('r', todo.id))?.status).toBe('done');
  expect((await store.sessions.get(sessionId))?.status).toBe('done');
  expect((await store.workspaces.list('r')).map((w) => w.status)).toEqual(['free']);
  expect(events.filter((e) => e.kind === 'settled')).toEqual([
    { kind: 'settled', settled: { todo_id: todo.id, job_id: job.id, outcome: 'done' } },
  ]);
});

it('a failed job’s: its todo open again', async () => {
  const { todo, sessionId } = await strandedJob('failed', DEAD_PID);
  // Open again, it would be started: this run starts none.
  await run([], { maxJobs: 0 });
  expect((await store.todos.get('r', todo.id))?.status).toBe('open');
  expect((await store.sessions.get(sessionId))?.status).toBe('failed');
});

it('ii run waits for a runner still alive, which may yet end the session, and ends it once that runner is gone', async () => {
  const runner = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(runner);
  const { todo, sessionId } = await strandedJob('completed', runner.pid!);
  let looks = 0;
  await run([], {
    onTick: () => {
      // Three looks with the runner alive: the run is not over, the session left to it.
      if (++looks === 3) runner.kill('SIGKILL');
    },
  });
  expect(looks).toBeGreaterThan(3);
  expect((await store.todos.get('r', todo.id))?.status).toBe('done');
  expect((await store.sessions.get(sessionId))?.status).toBe('done');
});

it('ii todo list’s sweep: a session ended but its todo left in progress (killed inside the end) is settled too; a live runner’s is not', async () => {
  const dead = await strandedJob('completed', DEAD_PID);
  // Killed between the session's status and the todo's: the session done, the todo in progress.
  await store.sessions.setStatus(dead.sessionId, 'done');
  const alive = await strandedJob('failed', process.pid);
  const settled = await settleStrandedTodos(store, 'r', endSession);
  expect(settled).toEqual([{ todo_id: dead.todo.id, job_id: dead.job.id, outcome: 'done' }]);
  expect((await store.todos.get('r', dead.todo.id))?.status).toBe('done');
  expect((await store.todos.get('r', alive.todo.id))?.status).toBe('in_progress');
  expect((await store.sessions.get(alive.sessionId))?.status).toBe('active');
});

it('ii todo list settles one it meets, saying so, and lists the todo done', async () => {
  const { todo, job } = await strandedJob('completed', DEAD_PID, repoSlug(repo));
  const r = ii(['todo', 'list', '--json'], { cwd: repo, env: testEnv(tmp.path) });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toContain(`todo ${todo.id} done: job ${job.id} completed, but its runner was gone`);
  expect((JSON.parse(r.stdout) as { id: string; status: string }[]).map((t) => [t.id, t.status])).toEqual([
    [todo.id, 'done'],
  ]);
});

it('the board settles one it meets, and says so', async () => {
  const { todo, job, sessionId } = await strandedJob('failed', DEAD_PID);
  const dash = createDashboardStore({ repo: 'r', repoLabel: 'r', banner: null, color: false });
  const sync = new DashboardSync({
    state: syncState,
    dash,
    pollMs: 60_000,
    settle: boardSettler(store, dash, endSession),
  });
  sync.loadAll();
  await waitFor(
    async () => (await store.todos.get('r', todo.id))?.status === 'open',
    'the board to settle it',
  );
  expect((await store.sessions.get(sessionId))?.status).toBe('failed');
  await waitFor(
    () => dash.getState().message?.includes(`todo ${todo.id} open again: job ${job.id} ended`),
    'the message',
  );
  await sync.close();
});
