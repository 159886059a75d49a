// A dashboard over a real state store in a temp XDG_STATE_HOME, for the
// component tests: jobs are written with the store's own API.
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { afterEach } from 'vitest';
import { createElement } from 'react';
import { Dashboard } from '../../components/Dashboard.js';
import { createActions, type ActionDeps } from '../../src/dashboard/io/actions.js';
import type { Actions } from '../../src/dashboard/view/actions-api.js';
import { createDashboardStore, type DashboardStore } from '../../src/dashboard/view/store.js';
import { DashboardSync } from '../../src/dashboard/io/sync.js';
import type { Job } from '../../src/model/job.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { tempDir, waitFor } from './tmp.js';

export const REPO = 'demo-12345678';

/** A probe for which every runner is alive (jobs are not stale) unless its pid is listed as dead. */
export const probe = (dead: number[] = []) => ({
  host: 'here',
  pidAlive: (pid: number) => !dead.includes(pid),
});

export interface DashFixture {
  dir: string;
  state: StateStore;
  dash: DashboardStore;
  sync: DashboardSync;
  actions: Actions;
  quits: number;
  retries: string[];
  cleanup: () => Promise<void>;
}

export function dashFixture(
  opts: { deps?: Partial<ActionDeps>; dead?: number[]; pollMs?: number; debounceMs?: number } = {},
): DashFixture {
  const tmp = tempDir('ii-dash-');
  const state = openStateStore({ dir: join(tmp.path, 'incrementum') });
  const dash = createDashboardStore({ repo: REPO, repoLabel: '/src/demo', color: false });
  const sync = new DashboardSync({
    state,
    dash,
    probe: probe(opts.dead),
    pollMs: opts.pollMs,
    debounceMs: opts.debounceMs,
  });
  const fx: DashFixture = {
    dir: tmp.path,
    state,
    dash,
    sync,
    quits: 0,
    retries: [],
    actions: null as unknown as Actions,
    cleanup: async () => {
      await sync.close();
      state.close();
      tmp.cleanup();
    },
  };
  fx.actions = createActions({
    state: asyncStore(state),
    read: state,
    dash,
    repoRoot: tmp.path,
    probe: probe(opts.dead),
    onChanged: () => sync.refreshJobs(),
    spawnRetry: (jobId) => {
      fx.retries.push(jobId);
      return { pid: 1, log: 'retry.log' };
    },
    quit: () => {
      fx.quits++;
    },
    ...opts.deps,
  });
  return fx;
}

let n = 0;
/** A job with `changes` changes of `iterations` commits each; the last commit as given. */
export function makeJob(
  state: StateStore,
  o: {
    title?: string;
    stage?: Job['stage'];
    finish?: 'completed' | 'failed' | 'abandoned';
    changes?: number;
    iterations?: number;
    tested?: boolean | null;
    review?: 'ACCEPT' | 'REQUEST_CHANGES' | 'ABANDON';
    pid?: number;
  } = {},
): Job {
  const todo = state.todos.create(REPO, { title: o.title ?? `todo ${++n}` });
  const job = state.jobs.create(REPO, { todo_id: todo.id, pid: o.pid ?? 4242, host: 'here' });
  for (let c = 0; c < (o.changes ?? 0); c++) {
    state.jobs.appendChange(job.id, `I${String(c).padStart(8, '0')}${job.id}`);
    for (let i = 0; i < (o.iterations ?? 1); i++) {
      state.jobs.appendCommit(job.id, {
        commit_id: `${c}${i}`.padEnd(40, 'f'),
        draft_message: `feat: change ${c + 1} iteration ${i + 1}\n\nbody`,
        files: [
          {
            path: `src/f${c}.ts`,
            abs_path: `/ws/src/f${c}.ts`,
            is_new: i === 0,
            is_deleted: false,
            additions: 5 + i,
            deletions: i,
          },
        ],
      });
      const last = i === (o.iterations ?? 1) - 1;
      if (!last) {
        state.jobs.updateCurrentCommit(job.id, {
          tests_passed: true,
          review: {
            outcome: 'REQUEST_CHANGES',
            comments: 'please fix',
            agent_session_id: null,
            reviewed_at: new Date().toISOString(),
          },
        });
      } else {
        if (o.tested !== undefined) state.jobs.updateCurrentCommit(job.id, { tests_passed: o.tested });
        if (o.review)
          state.jobs.updateCurrentCommit(job.id, {
            review: {
              outcome: o.review,
              comments: 'looks right',
              agent_session_id: null,
              reviewed_at: new Date().toISOString(),
            },
          });
      }
    }
  }
  if (o.stage) state.jobs.setStage(job.id, o.stage);
  if (o.finish) state.jobs.finish(job.id, o.finish, o.finish === 'failed' ? 'agent crashed' : null);
  // The todo as a runner leaves it: taken while its job runs, done once it
  // completed; after a failure it would be open again, but these boards are
  // about jobs, so it is closed (tests of the Backlog column make their own todos).
  state.todos.setStatus(
    REPO,
    todo.id,
    !o.finish ? 'in_progress' : o.finish === 'completed' ? 'done' : 'closed',
  );
  return state.jobs.get(job.id)!;
}

/** Waits until the last frame contains every text given; returns the frame. */
export async function frameWith(lastFrame: () => string | undefined, ...texts: string[]): Promise<string> {
  return waitFor(
    () => {
      const f = lastFrame() ?? '';
      return texts.every((t) => f.includes(t)) ? f : null;
    },
    `a frame containing ${texts.map((t) => JSON.stringify(t)).join(', ')}`,
    5000,
    10,
  ).catch((err: Error) => {
    // The frame at the time of giving up, not the one when the wait began.
    throw new Error(`${err.message}\nlast frame:\n${lastFrame() ?? ''}`);
  });
}

/** Waits until the last frame no longer contains a text. */
export async function frameWithout(lastFrame: () => string | undefined, text: string): Promise<string> {
  return waitFor(
    () => {
      const f = lastFrame() ?? '';
      return f.includes(text) ? null : f;
    },
    `a frame without ${JSON.stringify(text)}`,
    5000,
    10,
  );
}

export const KEY = {
  up: '\u001B[A',
  down: '\u001B[B',
  right: '\u001B[C',
  left: '\u001B[D',
  enter: '\r',
  esc: '\u001B',
  backspace: '\u007F',
};

/** Waits until Ink listens to stdin (its input effect runs after the first frame), so no key is lost. */
export async function inputReady(app: { stdin: { listenerCount(e: string): number } }): Promise<void> {
  await waitFor(() => app.stdin.listenerCount('readable') > 0, 'Ink to listen for keys', 5000, 5);
}

/** Loads the fixture's jobs and renders the dashboard at `size`, returned once it listens for keys. */
/** A rendered board (ink-testing-library's handle). */
export type RenderedDashboard = ReturnType<typeof render>;

/**
 * The boards a test file opens, each put away after its test: a fixture
 * (`fixture`, as dashFixture) is cleaned up and a rendered board (`render`,
 * as renderDashboard) unmounted, whatever the test did. Call it once at the
 * top of the file (it registers the afterEach), as gemini-cli's
 * test-utils/render.tsx keeps its render setup in one place.
 */
export function dashboards() {
  const fixtures: DashFixture[] = [];
  const apps: RenderedDashboard[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) app.unmount();
    for (const f of fixtures.splice(0)) await f.cleanup();
  });
  return {
    fixture(opts?: Parameters<typeof dashFixture>[0]): DashFixture {
      const f = dashFixture(opts);
      fixtures.push(f);
      return f;
    },
    async render(f: DashFixture, size?: { columns: number; rows: number }): Promise<RenderedDashboard> {
      const app = await renderDashboard(f, size);
      apps.push(app);
      return app;
    },
  };
}

export async function renderDashboard(
  f: DashFixture,
  size: { columns: number; rows: number } = { columns: 160, rows: 30 },
): Promise<RenderedDashboard> {
  f.sync.loadAll();
  const app = render(createElement(Dashboard, { store: f.dash, actions: f.actions, size }));
  await inputReady(app);
  return app;
}
