// The dashboard store follows the state dir: writes from another process
// (the database, event logs, transcripts) and events from a runner in this
// process.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Job } from '../../src/model/job.js';
import { dashFixture, makeJob, REPO, type DashFixture } from '../helpers/dash-fixture.js';
import { waitFor } from '../helpers/tmp.js';

const WRITER = join(import.meta.dirname, '..', 'fixtures', 'dash-writer.mjs');
let fx: DashFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

const write = (f: DashFixture, ...args: string[]) => writeAt(f, 0, ...args);
/** A write from another process whose clock is `shiftMs` ahead (see the writer). */
const writeAt = (f: DashFixture, shiftMs: number, ...args: string[]) =>
  execFileSync(process.execPath, [WRITER, ...args], {
    env: { ...process.env, XDG_STATE_HOME: f.dir, DASH_WRITER_CLOCK_SHIFT_MS: String(shiftMs) },
    encoding: 'utf8',
  }).trim();

const jobOf = (f: DashFixture, id: string) => f.dash.getState().jobs.find((j) => j.id === id);

it('picks up jobs another process creates, moves and finishes', async () => {
  // A long fallback poll: the watcher, not the poll, must carry every change.
  fx = dashFixture({ pollMs: 60_000 });
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  const id = write(fx, 'create', REPO, 'from elsewhere');
  await waitFor(() => jobOf(fx!, id), 'the new job in the store');
  expect(fx.dash.getState().todoTitles[jobOf(fx, id)!.todo_id]).toBe('from elsewhere');
  write(fx, 'stage', id, 'testing');
  await waitFor(() => jobOf(fx!, id)?.stage === 'testing', 'the stage change');
  write(fx, 'change', id, 'Iabc');
  write(fx, 'commit', id, 'c1', 'true');
  await waitFor(() => jobOf(fx!, id)?.changes[0]?.commits[0]?.tests_passed === true, 'the commit');
  write(fx, 'event', id, 'file_change', JSON.stringify({ path: 'src/y.ts', additions: 3, deletions: 0 }));
  await waitFor(() => fx!.dash.getState().files[id]?.[0]?.path === 'src/y.ts', 'the tracked file');
  write(fx, 'event', id, 'warning', JSON.stringify({ message: 'disk nearly full' }));
  await waitFor(
    () => fx!.dash.getState().live[id]?.includes('! disk nearly full'),
    'the warning in the pane',
  );
  write(fx, 'finish', id, 'completed');
  await waitFor(() => jobOf(fx!, id)?.status === 'completed', 'the finished job');
});

it('gets every kind of job mutation from another process, though it reloads only the jobs written, whatever the clocks', async () => {
  // The sync reloads only the jobs written after the store version it has
  // seen, so each mutation must stamp its job, whatever the writers' clocks
  // say: one writer runs 10 s ahead, the next a minute behind (a clock
  // stepped back), and every write still arrives.
  fx = dashFixture({ pollMs: 60_000 });
  const s = fx.state;
  const job = () => makeJob(s);
  const withCommit = () => makeJob(s, { changes: 1, iterations: 1 });
  const cases: { args: (id: string) => string[]; id: string; done: (j: Job) => boolean }[] = [
    { id: job().id, args: (id) => ['stage', id, 'testing'], done: (j) => j.stage === 'testing' },
    {
      id: job().id,
      args: (id) => ['feedback', id, 'fix the tests'],
      done: (j) => j.feedback === 'fix the tests',
    },
    {
      id: job().id,
      args: (id) => ['session', id, 'sess-1', '/tmp/ws'],
      done: (j) => j.session_id === 'sess-1' && j.workspace_path === '/tmp/ws',
    },
    {
      id: job().id,
      args: (id) => ['agent', id, 'agent-1'],
      done: (j) => j.agent_sessions.at(-1)?.id === 'agent-1',
    },
    { id: job().id, args: (id) => ['change', id, 'Inew'], done: (j) => j.changes[0]?.change_id === 'Inew' },
    {
      id: makeJob(s, { changes: 1, iterations: 0 }).id,
      args: (id) => ['commit', id, 'c-new'],
      done: (j) => j.changes[0]?.commits[0]?.commit_id === 'c-new',
    },
    {
      id: withCommit().id,
      args: (id) => ['tested', id, 'false'],
      done: (j) => j.changes[0]?.commits[0]?.tests_passed === false,
    },
    {
      id: withCommit().id,
      args: (id) => ['review', id, 'REQUEST_CHANGES'],
      done: (j) => j.changes[0]?.commits[0]?.review?.outcome === 'REQUEST_CHANGES',
    },
    {
      id: job().id,
      args: (id) => ['project-review', id, 'ACCEPT'],
      done: (j) => j.project_review?.outcome === 'ACCEPT',
    },
    { id: job().id, args: (id) => ['usage', id, '7'], done: (j) => j.usage.input_tokens === 7 },
    { id: job().id, args: (id) => ['heartbeat', id, '999'], done: (j) => j.pid === 999 },
    { id: job().id, args: (id) => ['finish', id, 'failed'], done: (j) => j.status === 'failed' },
  ];
  const pacer = job();
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  writeAt(fx, 10_000, 'stage', pacer.id, 'reviewing');
  await waitFor(() => jobOf(fx!, pacer.id)?.stage === 'reviewing', 'the pacing write');
  for (const c of cases) {
    expect(c.done(jobOf(fx, c.id)!), c.args(c.id).join(' ')).toBe(false);
    writeAt(fx, -60_000, ...c.args(c.id));
  }
  const created = writeAt(fx, -60_000, 'create', REPO, 'made later');
  for (const c of cases) {
    const what = c.args(c.id)[0]!;
    await waitFor(() => {
      const j = jobOf(fx!, c.id);
      return j && c.done(j);
    }, `the ${what} write in the store`);
  }
  await waitFor(() => jobOf(fx!, created), 'the job created later');
});

it('replaces a job reloaded with the same stamp but new content (two writes in one millisecond)', () => {
  fx = dashFixture();
  const job = makeJob(fx.state, { changes: 1, iterations: 1 });
  fx.sync.loadAll();
  const shown = jobOf(fx, job.id)!;
  const later = structuredClone(shown);
  later.changes[0]!.commits[0]!.tests_passed = true;
  fx.dash.getState().mergeJobs([later]);
  const kept = jobOf(fx, job.id)!;
  expect(kept.changes[0]!.commits[0]!.tests_passed).toBe(true);
  // An equal reload keeps the shown object, so its card is not re-rendered.
  fx.dash.getState().mergeJobs([structuredClone(later)]);
  expect(jobOf(fx, job.id)).toBe(kept);
});

it('keeps unchanged jobs identical across reloads (memoized cards)', () => {
  fx = dashFixture();
  const a = makeJob(fx.state, { title: 'a' });
  const b = makeJob(fx.state, { title: 'b' });
  fx.sync.loadAll();
  const before = fx.dash.getState().jobs;
  fx.state.jobs.setStage(b.id, 'testing');
  fx.sync.refreshJobs();
  const after = fx.dash.getState().jobs;
  expect(after).not.toBe(before);
  expect(after.find((j) => j.id === a.id)).toBe(before.find((j) => j.id === a.id));
  expect(after.find((j) => j.id === b.id)!.stage).toBe('testing');
});

it('shows events from a runner in this process at once', () => {
  fx = dashFixture();
  const job = makeJob(fx.state, { title: 'in process' });
  fx.sync.loadAll();
  fx.sync.feedRunnerEvent(job.id, {
    type: 'activity',
    purpose: 'implement',
    activity: { kind: 'message', text: 'hello there' },
  });
  fx.sync.feedRunnerEvent(job.id, {
    type: 'file_change',
    file: { path: 'z.ts', is_new: true, is_deleted: false, additions: 1, deletions: 0 },
  });
  fx.sync.feedRunnerEvent(job.id, { type: 'test_start', command: 'make test' });
  expect(fx.dash.getState().live[job.id]).toEqual(['  hello there', '$ make test']);
  expect(fx.dash.getState().files[job.id]!.map((f) => f.path)).toEqual(['z.ts']);
});

it('marks a job stale when its runner is gone, and not otherwise', () => {
  fx = dashFixture({ dead: [31337] });
  const dead = makeJob(fx.state, { pid: 31337 });
  const alive = makeJob(fx.state, { pid: 1 });
  fx.sync.loadAll();
  expect(fx.dash.getState().stale).toEqual({ [dead.id]: true });
  expect(fx.dash.getState().stale[alive.id]).toBeUndefined();
});
