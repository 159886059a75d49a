// The board's drawing code warmed off screen (src/cli/dashboard/warm.ts):
// keys pressed in a copy, through Ink's real render path, the board itself
// untouched and nothing left mounted, whether it ends, is stopped or fails.
import { render } from 'ink';
import { createElement } from 'react';
import { describe, expect, it } from 'vitest';
import { Dashboard } from '../../components/Dashboard.js';
import { SMALL_BOARD_JOBS } from '../../src/cli/dashboard/heap.js';
import { WARM_KEYS, warmBoard, type WarmOptions } from '../../src/cli/dashboard/warm.js';
import { createActions } from '../../src/dashboard/io/actions.js';
import { cursor } from '../../src/dashboard/view/board.js';
import { createDashboardStore, type DashboardStore } from '../../src/dashboard/view/store.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { dashboards, makeJob, REPO, type DashFixture } from '../helpers/dash-fixture.js';

const board = dashboards();

/** warmBoard on `fx`'s board, its copies and Ink instances counted. */
function warmOn(fx: DashFixture, o: Partial<WarmOptions> = {}, onMove = () => {}) {
  const seen = { copies: [] as DashboardStore[], moves: 0, mounted: 0, unmounted: 0 };
  const warm = warmBoard({
    render: (el, opts) => {
      const app = render(el, opts);
      seen.mounted++;
      return {
        unmount: () => {
          seen.unmounted++;
          app.unmount();
        },
      };
    },
    element: (copy) =>
      createElement(Dashboard, {
        store: copy,
        actions: createActions({
          state: asyncStore(fx.state),
          read: fx.state,
          dash: copy,
          repoRoot: fx.dir,
          quit: () => {},
        }),
      }),
    dash: fx.dash,
    newStore: () => {
      const copy = createDashboardStore({ repo: REPO, repoLabel: '/src/demo', color: false });
      copy.subscribe((s, prev) => {
        const [a, b] = [cursor(s), cursor(prev)];
        if (a.col !== b.col || a.row !== b.row) {
          seen.moves++;
          onMove();
        }
      });
      seen.copies.push(copy);
      return copy;
    },
    columns: 120,
    rows: 30,
    maxFps: 60,
    delayMs: 0,
    ...o,
  });
  return { warm, seen };
}

/** A board of jobs in two columns, loaded. */
function loadedBoard(): DashFixture {
  const fx = board.fixture();
  for (let i = 0; i < 4; i++) makeJob(fx.state, { title: `running ${i}` });
  for (let i = 0; i < 3; i++) makeJob(fx.state, { title: `done ${i}`, finish: 'completed' });
  fx.sync.loadAll();
  return fx;
}

describe('warming the board off screen', () => {
  it("presses the moves in a copy of the board's state, leaves the board as it was and nothing mounted", async () => {
    const fx = loadedBoard();
    const before = fx.dash.getState();
    const { warm, seen } = warmOn(fx);
    await warm.done;
    expect(seen.copies).toHaveLength(1);
    // The copy had the board's jobs, and moved on them: down, up, across and back.
    expect(seen.copies[0]!.getState().jobs).toBe(before.jobs);
    expect(seen.moves).toBeGreaterThanOrEqual(WARM_KEYS.length);
    // The board's own state: the same selection, the same objects.
    expect(fx.dash.getState().nav).toBe(before.nav);
    expect(cursor(fx.dash.getState())).toEqual(cursor(before));
    expect(seen).toMatchObject({ mounted: 1, unmounted: 1 });
  });

  it('stopped before it starts draws nothing; stopped midway, it unmounts at once and presses no more', async () => {
    const fx = loadedBoard();
    const early = warmOn(fx, { delayMs: 60_000 });
    early.warm.stop();
    await early.warm.done;
    expect(early.seen).toMatchObject({ mounted: 0, unmounted: 0, copies: [] });

    // Stopped as its first move is drawn: as the board's first key would.
    const at: { mounted?: number; unmounted?: number } = {};
    const mid = warmOn(fx, {}, () => {
      if (mid.seen.moves !== 1) return;
      mid.warm.stop();
      Object.assign(at, { mounted: mid.seen.mounted, unmounted: mid.seen.unmounted });
    });
    await mid.warm.done;
    expect(at).toEqual({ mounted: 1, unmounted: 1 });
    expect(mid.seen.moves).toBe(1);
  });

  it('leaves a board of SMALL_BOARD_JOBS jobs alone (sized for memory), and ends quietly when the copy cannot be drawn', async () => {
    const fx = loadedBoard();
    const job = fx.dash.getState().jobs[0]!;
    fx.dash.setState({ jobs: Array.from({ length: SMALL_BOARD_JOBS }, () => job) });
    const big = warmOn(fx);
    await big.warm.done;
    expect(big.seen).toMatchObject({ mounted: 0, copies: [] });

    const fx2 = loadedBoard();
    const failing = warmOn(fx2, {
      element: () => {
        throw new Error('cannot draw');
      },
    });
    await expect(failing.warm.done).resolves.toBeUndefined();
    expect(failing.seen.mounted).toBe(0);
  });
});
