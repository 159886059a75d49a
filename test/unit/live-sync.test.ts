// The dashboard store follows the state dir: writes from another process
// (the database, event logs, transcripts) and events from a runner in this
// process.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { dashFixture, makeJob, REPO, type DashFixture } from '../helpers/dash-fixture.js';
import { waitFor } from '../helpers/tmp.js';

const WRITER = join(import.meta.dirname, '..', 'fixtures', 'dash-writer.mjs');
let fx: DashFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

const write = (f: DashFixture, ...args: string[]) =>
  execFileSync(process.execPath, [WRITER, ...args], {
    env: { ...process.env, XDG_STATE_HOME: f.dir },
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
