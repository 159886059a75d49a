// A machine's dashboard for the keypress → frame rows of
// bench/shared-store.bench.js: built as `ii dashboard` builds it
// (src/cli/dashboard/run.ts) for the repository of its working directory,
// on the shared PostgreSQL store when II_DATABASE_URL is set (the copy in
// memory LISTEN/NOTIFY keeps, other machines' logs read from the store),
// else on this machine's SQLite state; drawn through Ink's real render path
// into a fake terminal and timed with bench/ink-keys.js (the frame a key is
// measured to is the first drawn from a render that saw the key's selection).
// Arguments: dist, the presses wanted, and "floor" for the one-line app below.
// Protocol: prints "ready" once the board is loaded; on the line "go" waits
// until the board shows a running job, says "pressing", then presses keys until `want`
// presses that changed the selection were made while the board showed a
// running job, or no job runs any more (or the budget is spent), and prints
// one JSON line: {ms: those presses' latencies, cpu: the board's CPU time
// from each of them to its frame, pressed: all presses counted, fps: frames
// drawn a second while pressing, jobs: jobs on the board at the end, cpuMs:
// the process's user+sys CPU while pressing, errors: what the store's reads
// threw, trace: each press's time, latency, running jobs, CPU time and how long
// the board waited for a core meanwhile (null without Linux's schedstat)}.
import { createInterface } from 'node:readline';
import { floorKeyLatency, keyLatency, until } from './ink-keys.js';

process.env.NODE_ENV ??= 'production';
const [dist, wantArg, mode] = process.argv.slice(2);
const want = Number(wantArg ?? 120);
if (mode === 'floor') {
  // The floor beside the boards: the same keys into a one-line Ink app, in
  // a process of its own on the same machine at the same time ("go" is sent
  // when the first board starts pressing): what the machine's load alone
  // does to keypress → frame.
  const rl = createInterface({ input: process.stdin });
  rl.once('close', () => process.exit(1)); // the bench gone
  process.stdout.write('ready\n');
  await new Promise((r) => rl.once('line', r));
  const cpu = [];
  const ms = await floorKeyLatency(['j', 'j', 'j', 'k', 'k', 'k', 'L', 'h'], want, {
    onPress: (_ms, cpuMs) => cpu.push(cpuMs),
  });
  process.stdout.write(JSON.stringify({ ms, cpu }) + '\n');
  process.exit(0);
}
const m = (p) => import(`${dist}/${p}`);
const heap = await m('src/cli/dashboard/heap.js');
heap.tuneHeapForDashboard();
const { currentRepo } = await m('src/cli/context.js');
const { openStateStore } = await m('src/state/index.js');
const { databaseUrl, openAsyncStateStore } = await m('src/state/open-async.js');
const { asyncStore } = await m('src/state/sync-adapter.js');
const { StoreMirror } = await m('src/dashboard/io/board-source.js');
const { createDashboardStore } = await m('src/dashboard/view/store.js');
const { DashboardSync } = await m('src/dashboard/io/sync.js');
const { createActions } = await m('src/dashboard/io/actions.js');
const { boardReaper } = await m('src/dashboard/io/reap.js');
const { cursor, selectedCard } = await m('src/dashboard/view/board.js');
const { Dashboard } = await m('components/Dashboard.js');
const { createElement } = await import('react');
const { useStore } = await import('zustand');

// BENCH_DEBUG: the board's queries to the store, counted by their SQL (reported on stderr).
const queries = new Map();
if (process.env.BENCH_DEBUG) {
  const { default: pg } = await import('pg');
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (q, ...rest) {
    const k = String(typeof q === 'string' ? q : q?.text).slice(0, 70);
    queries.set(k, (queries.get(k) ?? 0) + 1);
    return query.call(this, q, ...rest);
  };
}
const repo = currentRepo();
const shared = databaseUrl() !== null;
const state = shared ? null : openStateStore();
const store = state ? asyncStore(state) : await openAsyncStateStore();
const shipping = shared ? (await m('src/cli/job/log-shipping.js')).mirrorJobLogs(store) : null;
let onMirror = () => {};
const errors = [];
const mirror = shared
  ? new StoreMirror(
      store,
      repo.slug,
      () => onMirror(),
      (e) => errors.push(String(e)),
    )
  : null;
const source = state ?? mirror;
const init = { repo: repo.slug, repoLabel: repo.root, color: true };
const dash = createDashboardStore(init);
const sync = new DashboardSync({
  state: source,
  dash,
  reap: boardReaper(store, dash),
  ...(shared ? { stored: store } : {}),
});
onMirror = () => sync.refreshJobs();
await mirror?.load();
sync.loadAll();
// As run.ts does once the jobs are loaded (absent from builds before it).
heap.followBoardSize?.(dash);
sync.start();
await mirror?.watch();
const actionDeps = {
  state: store,
  read: source,
  dash,
  repoRoot: repo.root,
  maxAttempts: () => sync.maxAttemptsNow,
  onChanged: () => (mirror ? void mirror.refresh() : sync.refreshJobs()),
  quit: () => {},
};
const actions = createActions(actionDeps);
// What a keypress changes: where the cursor is, on which card (as text:
// running jobs' writes give the board new nav objects all the time).
const selection = (s) => {
  const c = cursor(s);
  return `${s.nav.level} ${c.col}:${c.row} ${selectedCard(s)?.key}`;
};
const active = () => dash.getState().jobs.filter((j) => j.status === 'active').length;
const running = () => active() > 0;

// As run.ts does 300 ms after the board is drawn: its drawing code warmed off
// screen, on a copy of its state (src/cli/dashboard/warm.ts; absent from
// builds before it).
const warm = await m('src/cli/dashboard/warm.js').catch(() => null);
if (warm) {
  const { render } = await import('ink');
  await warm.warmBoard({
    render,
    element: (copy) =>
      createElement(Dashboard, {
        store: copy,
        actions: createActions({ ...actionDeps, dash: copy, onChanged: () => {}, quit: () => {} }),
      }),
    dash,
    newStore: () => createDashboardStore(init),
    columns: 120,
    rows: 40,
    maxFps: 60,
    delayMs: 0,
  }).done;
}

const lines = createInterface({ input: process.stdin });
// The bench gone (its end of the pipe closed): a board in a session of its own
// gets no signal from the bench's terminal, and its store would keep it alive.
lines.once('close', () => process.exit(1));
const next = () => new Promise((r) => lines.once('line', r));
process.stdout.write('ready\n');
await next();
await until(running, 'a running job on the board', 120_000);
process.stdout.write('pressing\n');
let busy = 0;
// Each counted press: [ms since the first press, its latency, jobs running then, CPU ms press → frame].
const trace = [];
const cpu = [];
const busyMs = [];
let drawn = 0;
let pressedMs = 0;
const t0 = performance.now();
const c0 = process.cpuUsage();
const all = await keyLatency({
  element: createElement(Dashboard, { store: dash, actions }),
  state: { get: () => selection(dash.getState()), use: () => useStore(dash, selection) },
  // Up and down the column the board opens on, and across to the next and back.
  keys: ['j', 'j', 'j', 'k', 'k', 'k', 'L', 'h'],
  n: want * 8,
  // Only presses made while jobs run count: until `want` of them, or the jobs are done.
  stopWhen: () => busy >= want || !running(),
  budgetMs: 150_000,
  after: (frames) => {
    drawn = frames.n;
    pressedMs = performance.now() - t0;
  },
  onPress: (ms, cpuMs, waitMs) => {
    const n = active();
    if (n) {
      busy++;
      busyMs.push(ms);
      cpu.push(cpuMs);
    }
    trace.push([
      Math.round(performance.now() - t0),
      Math.round(ms * 10) / 10,
      n,
      Math.round(cpuMs * 10) / 10,
      waitMs === null ? null : Math.round(waitMs * 10) / 10,
    ]);
  },
});
const c = process.cpuUsage(c0);
const out = {
  ms: busyMs,
  cpu,
  pressed: all.length,
  fps: drawn / (pressedMs / 1000),
  jobs: dash.getState().jobs.length,
  cpuMs: (c.user + c.system) / 1000,
  errors,
  trace,
};
await sync.close();
await mirror?.close();
await shipping?.close();
if (state) state.close();
else await store.close();
for (const [k, n] of [...queries].sort((a, b) => b[1] - a[1]).slice(0, 12))
  process.stderr.write(`board ${process.env.II_HOST}: ${n} × ${k}\n`);
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
