// The board's Backlog decides readiness as the runner that will start the
// todo does: a dep that completed but has not landed blocks under ii run
// --land (recorded on the runner's row), and only says so otherwise.
import { afterEach, expect, it } from 'vitest';
import { BacklogRunner, type BacklogSnapshot } from '../../src/backlog/scheduler.js';
import { boardColumns, BACKLOG } from '../../src/dashboard/view/board.js';
import { dashFixture, makeJob, REPO, type DashFixture } from '../helpers/dash-fixture.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let fx: DashFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

const backlogCards = (f: DashFixture) =>
  boardColumns(f.dash.getState()).find((c) => c.title === BACKLOG)?.cards ?? [];

/** What one look of ii run (with or without --land) sees of the same store: its ready and blocked counts. */
async function runnerLook(f: DashFixture, land: boolean): Promise<BacklogSnapshot> {
  const runner = new BacklogRunner({
    store: asyncStore(f.state),
    finishSession: async () => {},
    repo: { root: f.dir, slug: REPO },
    slots: 1,
    maxAttempts: 3,
    ...(land ? { depsLanded: true } : {}),
    // No job is started: one look, then it stops.
    maxJobs: 0,
    start: () => {
      throw new Error('no job starts in this test');
    },
  });
  await runner.run();
  return runner.snapshot();
}

it('a todo whose dep completed unlanded waits for it under a landing runner, and is ready with a note otherwise', async () => {
  fx = dashFixture();
  // The dep: completed with a commit, not landed.
  const dep = makeJob(fx.state, { title: 'Add the parser', finish: 'completed', changes: 1 });
  const next = fx.state.todos.create(REPO, { title: 'Use the parser', deps: [dep.todo_id] });
  fx.sync.loadAll();

  // No runner runs: ready (ii run would start it), saying its dep has not landed.
  expect(fx.dash.getState().backlog.ready.map((t) => t.id)).toEqual([next.id]);
  expect(backlogCards(fx)[0]!.detail).toBe(`ready · ${dep.todo_id} not landed · p2 task · ${next.id}`);

  // An ii run --land runs (pid 4242 is alive for the fixture's probe): blocked, as that run counts it.
  const landing = fx.state.runners.register({
    repo: REPO,
    pid: 4242,
    host: 'here',
    slots: 1,
    watch: true,
    lands: true,
  });
  fx.sync.refreshBacklog();
  expect(fx.dash.getState().backlog.ready).toEqual([]);
  expect(backlogCards(fx)[0]!.detail).toBe(`blocked: waits for ${dep.todo_id} to land`);
  const strict = await runnerLook(fx, true);
  expect([strict.ready, strict.blocked]).toEqual([0, 1]);
  expect(fx.dash.getState().backlog.blocked).toHaveLength(strict.blocked);

  // A runner that does not land takes its place: ready again, as that run counts it.
  fx.state.runners.remove(landing.id);
  fx.state.runners.register({ repo: REPO, pid: 4242, host: 'here', slots: 1, watch: true });
  fx.sync.refreshBacklog();
  expect(fx.dash.getState().backlog.ready.map((t) => t.id)).toEqual([next.id]);
  const loose = await runnerLook(fx, false);
  expect([loose.ready, loose.blocked]).toEqual([1, 0]);

  // Once the dep lands, nothing is left to say, whoever runs.
  fx.state.jobs.setLanded(dep.id, {
    onto: 'main',
    commit: 'c'.repeat(40),
    at: new Date().toISOString(),
    tested: true,
  });
  fx.sync.refreshJobs();
  expect(backlogCards(fx)[0]!.detail).toBe(`ready · p2 task · ${next.id}`);
});

it('a landing runner recorded by the store says so; one registered without --land does not', () => {
  fx = dashFixture();
  const a = fx.state.runners.register({
    repo: REPO,
    pid: 1,
    host: 'here',
    slots: 2,
    watch: false,
    lands: true,
  });
  const b = fx.state.runners.register({ repo: REPO, pid: 2, host: 'here', slots: 2, watch: false });
  expect(fx.state.runners.get(a.id)?.lands).toBe(true);
  expect(fx.state.runners.get(b.id)?.lands).toBe(false);
});
