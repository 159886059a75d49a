// The containers read only the nav fields they draw: scrolling an overlay
// re-renders the overlay, not the status bar (which shows the filter, the
// counts and the hints). Each subscription to the whole nav object re-drew
// the frame, the board and the status bar on every key.
import { expect, it, vi } from 'vitest';
import { frameWith, makeJob, dashboards } from '../helpers/dash-fixture.js';

const counts = vi.hoisted(() => ({ status: 0 }));
vi.mock('../../components/StatusBar.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../components/StatusBar.js')>();
  return {
    ...real,
    StatusBar: (p: Parameters<typeof real.StatusBar>[0]) => {
      counts.status++;
      return real.StatusBar(p);
    },
  };
});

const board = dashboards();

it('scrolling the help overlay does not re-render the status bar', async () => {
  const fx = board.fixture();
  makeJob(fx.state, { title: 'parser bug' });
  const app = await board.render(fx, { columns: 80, rows: 24 });
  const { lastFrame } = app;
  await frameWith(lastFrame, 'parser bug');
  fx.dash.getState().dispatch({ type: 'overlay', overlay: 'help' });
  const top = await frameWith(lastFrame, 'Keys (esc closes)');
  const before = counts.status;
  expect(before).toBeGreaterThan(0);
  fx.dash.getState().dispatch({ type: 'scroll', delta: 3 });
  await vi.waitFor(() => expect(lastFrame()).not.toBe(top), { timeout: 5000, interval: 10 });
  expect(counts.status).toBe(before);
});
