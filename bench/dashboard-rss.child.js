// RSS of the dashboard with 10,000 jobs loaded, the state dir watched and one
// frame drawn, in a fresh process (so nothing else the benchmarks loaded
// counts), against the same process before it loads anything of the
// dashboard. Prints {value, peak, floor, jobs} in MB.
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';

const [dist, stateDir] = process.argv.slice(2);
const mb = () => process.memoryUsage().rss / 2 ** 20;
const { openStateStore } = await import(`${dist}/src/state/index.js`);
const floor = mb();
// As src/cli/dashboard/run.ts does, before the jobs are loaded.
(await import(`${dist}/src/cli/dashboard/heap.js`)).tuneHeapForDashboard();
const { RENDER_OPTIONS } = await import(`${dist}/src/cli/dashboard/run.js`);
const { createDashboardStore } = await import(`${dist}/src/dashboard/view/store.js`);
const { DashboardSync } = await import(`${dist}/src/dashboard/io/sync.js`);
const { createActions } = await import(`${dist}/src/dashboard/io/actions.js`);
const { render } = await import('ink');
const { createElement } = await import('react');
const { Dashboard } = await import(`${dist}/components/Dashboard.js`);

const state = openStateStore({ dir: stateDir });
const dash = createDashboardStore({ repo: null, repoLabel: 'bench', color: true });
const sync = new DashboardSync({ state, dash });
sync.loadAll();
sync.start();
await sync.ready();
let frames = 0;
const stdout = Object.assign(
  new Writable({
    write(_c, _e, cb) {
      frames++;
      cb();
    },
  }),
  { columns: 120, rows: 40, isTTY: true },
);
const stdin = Object.assign(new EventEmitter(), {
  isTTY: true,
  setRawMode() {},
  setEncoding() {},
  resume() {},
  pause() {},
  ref() {},
  unref() {},
  read: () => null,
});
const app = render(
  createElement(Dashboard, {
    store: dash,
    actions: createActions({ state, dash, repoRoot: null, quit: () => {} }),
  }),
  { ...RENDER_OPTIONS, stdout, stdin, patchConsole: false },
);
const end = Date.now() + 30_000;
while (frames === 0) {
  if (Date.now() > end) throw new Error('no frame drawn in 30 s');
  await new Promise((r) => setTimeout(r, 10));
}
const jobs = dash.getState().jobs.length;
const value = mb();
// The high-water mark: loading 10,000 jobs peaks above where it settles.
const peak = process.resourceUsage().maxRSS / 1024;
app.unmount();
await sync.close();
state.close();
process.stdout.write(JSON.stringify({ value, peak, floor, jobs }) + '\n');
process.exit(0);
