// The dashboard of the flood benchmark (bench/flood.bench.js): the real sync,
// store and Ink views, drawing into a fake terminal, following whatever job
// the board shows (the one job the benchmark runs, flooding), and with the
// argument "log" its whole log too, as the l overlay shows it. Runs until its
// stdin closes, then prints {peak, live} (peak RSS in MB; live: whether the
// job's live pane showed the flood at some point).
import { fakeTerminal } from './ink-keys.js';

const [dist, stateDir, view] = process.argv.slice(2);
const heap = await import(`${dist}/src/cli/dashboard/heap.js`);
heap.tuneHeapForDashboard();
const { openStateStore } = await import(`${dist}/src/state/index.js`);
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
// As run.ts does once the jobs are loaded (absent from builds before it).
heap.followBoardSize?.(dash);
sync.start();
await sync.ready();
const actions = createActions({ state, dash, repoRoot: null, quit: () => {} });
let live = false;
let logOpen = false;
const unsubscribe = dash.subscribe((s) => {
  if (!live) live = Object.values(s.live).some((lines) => lines.some((l) => l.includes('flood ')));
  // With view "log", the job's whole log is loaded as soon as it has an
  // agent session, as the l overlay loads it, and then follows the job; the
  // overlay is open, so its rows are measured and drawn as a person sees them.
  const job = s.jobs[0];
  if (view === 'log' && !logOpen && job?.agent_sessions.length) {
    logOpen = true;
    actions.loadRecord(job.id);
    dash.getState().dispatch({ type: 'overlay', overlay: 'logs' });
  }
});
const { stdout, stdin } = fakeTerminal({ value: undefined });
const app = render(
  createElement(Dashboard, {
    store: dash,
    actions,
  }),
  { ...RENDER_OPTIONS, stdout, stdin, patchConsole: false },
);
process.stdout.write('ready\n');
process.stdin.resume();
await new Promise((r) => process.stdin.once('end', r));
const peak = process.resourceUsage().maxRSS / 1024;
unsubscribe();
app.unmount();
await sync.close();
state.close();
process.stdout.write(JSON.stringify({ peak, live }) + '\n');
process.exit(0);
