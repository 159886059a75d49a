// A key whose action fails on the store (PostgreSQL unreachable for a moment,
// a read that throws) says so on the board: the failure is not an unhandled
// rejection, which `ii dashboard` takes for a crash and closes the board on.
import { render } from 'ink-testing-library';
import { afterEach, expect, it } from 'vitest';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import {
  dashFixture,
  frameWith,
  makeJob,
  renderDashboard,
  type DashFixture,
} from '../helpers/dash-fixture.js';

let fx: DashFixture | null = null;
let app: ReturnType<typeof render> | null = null;
afterEach(async () => {
  app?.unmount();
  app = null;
  await fx?.cleanup();
  fx = null;
});

it('a key whose action fails on the store says why on the board, and the board goes on', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    // The actions' store: the real one (set once the fixture has made it),
    // but its job reads fail as a lost server's would.
    const real: { s?: AsyncStateStore } = {};
    const lost = () => Promise.reject(new Error('Connection terminated unexpectedly'));
    const jobs = new Proxy({} as AsyncStateStore['jobs'], {
      get: (_, k) => (k === 'get' ? lost : real.s!.jobs[k as keyof AsyncStateStore['jobs']]),
    });
    const state = new Proxy({} as AsyncStateStore, {
      get: (_, k) => (k === 'jobs' ? jobs : real.s![k as keyof AsyncStateStore]),
    });
    fx = dashFixture({ deps: { state } });
    real.s = asyncStore(fx.state);
    makeJob(fx.state, { title: 'a job' });
    const { lastFrame, stdin } = (app = await renderDashboard(fx));
    await frameWith(lastFrame, 'a job');
    stdin.write('l');
    await frameWith(lastFrame, 'Connection terminated unexpectedly');
    // Still drawn, still answering keys.
    stdin.write('?');
    await frameWith(lastFrame, 'Open and close');
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
