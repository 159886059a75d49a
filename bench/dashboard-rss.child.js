// RSS of the dashboard with 10,000 jobs loaded, the state dir watched and one
// frame drawn, in a fresh process (so nothing else the benchmarks loaded
// counts), against the same process before it loads anything of the
// dashboard. The board is built from the dashboard's bundled entry
// (dist/cli/dashboard.js, Ink bundled in), the code `ii dashboard` runs.
// Prints {value, peak, floor, modules, jobs} in MB (modules: after loading
// the dashboard's code, before the jobs).
import { fakeKeyboard } from './fake-keyboard.js';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';

const [dist, stateDir] = process.argv.slice(2);
const mb = () => process.memoryUsage().rss / 2 ** 20;
const floor = mb();
const {
  BOARD_STORE_OPTIONS,
  openStateStore,
  tuneHeapForDashboard,
  followBoardSize,
  RENDER_OPTIONS,
  createDashboardStore,
  DashboardSync,
  createActions,
  loadView,
} = await import(`${dist}/cli/dashboard.js`);
// As src/cli/dashboard/run.ts does, before the jobs are loaded.
tuneHeapForDashboard();
const [{ render }, { Dashboard }] = await loadView();
// Required, as the bundle requires React (scripts/react-require.mjs): an
// import would scan React's development build too, which run.ts never reads.
const { createElement } = createRequire(import.meta.url)('react');
const modules = mb();

// As run.ts opens it (absent from builds before it had options).
const state = openStateStore({ dir: stateDir, ...BOARD_STORE_OPTIONS });
const dash = createDashboardStore({ repo: null, repoLabel: 'bench', color: true });
const sync = new DashboardSync({ state, dash });
sync.loadAll();
// As run.ts does once the jobs are loaded (absent from builds before it).
followBoardSize?.(dash);
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
const stdin = fakeKeyboard(); // never pressed
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
process.stdout.write(JSON.stringify({ value, peak, floor, modules, jobs }) + '\n');
process.exit(0);
