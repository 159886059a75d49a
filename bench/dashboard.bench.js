// Dashboard figures (issue 7), each against a floor measured in the same run:
// - a job change written by another process → in the dashboard store, p95,
//   against a raw fs.watch notification of another process's write;
// - keypress → new frame, median and p95, through the real Dashboard and
//   Ink's real render path (the dashboard's own render options, a fake
//   terminal), against the same keypress → frame in a one-line Ink app;
// - RSS with 10,000 jobs loaded, watched and drawn (after the first frame, and
//   the peak), and after loading the dashboard's modules alone, in a fresh
//   process running the dashboard's bundled entry, against that process
//   before it loads the dashboard.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fakeTerminal, now, pause, until } from './ink-keys.js';
import { median, quantile, round } from './stats.js';

// The dashboard loads React's production build (src/cli/dashboard/production-env.ts).
process.env.NODE_ENV ??= 'production';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const trace = (m) => process.env.BENCH_DEBUG && process.stderr.write(`dashboard bench: ${m}\n`);

/**
 * Seeds a state dir in another process: `jobs` jobs of one change with
 * `commits` commits, a third finished. Their stamps are an hour old, as a
 * board's history is: the dashboard reloads what was stamped within a second
 * of the newest write, and a seed written in that second would be reloaded
 * on every write of the benchmark.
 */
function seed(stateDir, jobs, commits) {
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const Real = Date;
       globalThis.Date = class extends Real {
         constructor(...a) { if (a.length === 0) super(Real.now() - 3_600_000); else super(...a); }
         static now() { return Real.now() - 3_600_000; }
       };
       const { openStateStore } = await import(${JSON.stringify(join(dist, 'src', 'state', 'index.js'))});
       const s = openStateStore({ dir: ${JSON.stringify(stateDir)} });
       const todo = s.todos.create('bench', { title: 'benchmark todo' });
       for (let j = 0; j < ${jobs}; j++) {
         const job = s.jobs.create('bench', { todo_id: todo.id, pid: process.ppid, host: 'bench' });
         s.jobs.appendChange(job.id, 'I' + j);
         for (let c = 0; c < ${commits}; c++)
           s.jobs.appendCommit(job.id, { commit_id: j + '-' + c, draft_message: 'feat: x',
             files: [{ path: 'src/a.ts', is_new: false, is_deleted: false, additions: 3, deletions: 1 }] });
         if (j % 3 === 0) s.jobs.finish(job.id, 'completed');
       }
       s.close();`,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`seeding failed: ${r.stderr}`);
}

/** A line-oriented child process: send a line, read the next line back. */
function child(args) {
  const p = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = [];
  const waiters = [];
  createInterface({ input: p.stdout }).on('line', (l) =>
    waiters.length ? waiters.shift()(l) : lines.push(l),
  );
  const next = () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((r) => waiters.push(r)));
  return { p, next, send: (l) => p.stdin.write(l + '\n') };
}

async function storeLatency(tmp, stateDir) {
  const { openStateStore } = await import(join(dist, 'src', 'state', 'index.js'));
  const { createDashboardStore } = await import(join(dist, 'src', 'dashboard', 'view', 'store.js'));
  const { DashboardSync } = await import(join(dist, 'src', 'dashboard', 'io', 'sync.js'));
  const state = openStateStore({ dir: stateDir });
  const dash = createDashboardStore({ repo: null, repoLabel: 'bench' });
  // The default debounce; a long fallback poll, so the watcher carries every change.
  const sync = new DashboardSync({ state, dash, pollMs: 60_000 });
  sync.loadAll();
  sync.start();
  await sync.ready();
  const jobId = dash.getState().jobs.find((j) => j.status === 'active').id;
  const floorFile = join(tmp, 'floor.txt');
  writeFileSync(floorFile, '');
  const w = child([join(root, 'bench', 'dashboard-writer.child.js'), dist, stateDir, jobId, floorFile]);
  await w.next();
  const stageOf = (s) => s.jobs.find((j) => j.id === jobId)?.stage;
  let before = stageOf(dash.getState());
  let seen = 0;
  const unsub = dash.subscribe((s) => {
    if (!seen && stageOf(s) !== before) seen = now();
  });
  let fsSeen = 0;
  const fw = watch(floorFile, () => (fsSeen ||= now()));
  const lat = [];
  const floor = [];
  for (let i = 0; i < 40; i++) {
    // Interleaved, so both see the same machine load.
    before = stageOf(dash.getState());
    seen = 0;
    w.send('stage');
    const wrote = Number(await w.next());
    await until(() => seen > 0, 'the stage change in the store');
    lat.push(Math.max(0, seen - wrote));
    fsSeen = 0;
    w.send('floor');
    const appended = Number(await w.next());
    await until(() => fsSeen > 0, 'the fs.watch event');
    floor.push(Math.max(0.01, fsSeen - appended));
    await pause(30);
  }
  fw.close();
  unsub();
  const exited = new Promise((r) => w.p.on('exit', r));
  w.p.stdin.end();
  await exited;
  await sync.close();
  state.close();
  return { lat, floor };
}

/** Milliseconds from each keypress to the frame it causes. */
async function keyLatency(element, keys, n = 60) {
  const { render } = await import('ink');
  const { RENDER_OPTIONS } = await import(join(dist, 'src', 'cli', 'dashboard', 'run.js'));
  // No probe here: a frame after the key is the key's (nothing else draws meanwhile).
  const t = fakeTerminal({});
  const app = render(element, { ...RENDER_OPTIONS, stdout: t.stdout, stdin: t.stdin });
  await until(() => t.frames.n > 0 && t.stdin.listenerCount('readable') > 0, 'the first frame');
  const out = [];
  for (let i = 0; i < n; i++) {
    // Past Ink's frame throttle (maxFps), as a person's keypresses are.
    await pause(40);
    const before = t.frames.n;
    const t0 = now();
    t.stdin.press(keys[i % keys.length]);
    await until(() => t.frames.n > before, 'a frame after the key');
    out.push(t.frames.at - t0);
  }
  app.unmount();
  return out;
}

async function keys(stateDir) {
  const { createElement, useState } = await import('react');
  const { Text, useInput } = await import('ink');
  const { openStateStore } = await import(join(dist, 'src', 'state', 'index.js'));
  const { createDashboardStore } = await import(join(dist, 'src', 'dashboard', 'view', 'store.js'));
  const { DashboardSync } = await import(join(dist, 'src', 'dashboard', 'io', 'sync.js'));
  const { createActions } = await import(join(dist, 'src', 'dashboard', 'io', 'actions.js'));
  const { Dashboard } = await import(join(dist, 'components', 'Dashboard.js'));
  // As the dashboard runs (src/cli/dashboard/run.ts); the floor app runs under it too.
  const heap = await import(join(dist, 'src', 'cli', 'dashboard', 'heap.js'));
  heap.tuneHeapForDashboard();
  const state = openStateStore({ dir: stateDir });
  const dash = createDashboardStore({ repo: null, repoLabel: 'bench' });
  const sync = new DashboardSync({ state, dash });
  sync.loadAll();
  // As run.ts does once the jobs are loaded (absent from builds before it).
  heap.followBoardSize?.(dash);
  const actions = createActions({ state, dash, repoRoot: null, quit: () => {} });
  // Each moves the selection, so each draws a new frame.
  const moves = ['j', 'j', 'j', 'k', 'k', 'k', 'L', 'h'];
  const dashMs = await keyLatency(createElement(Dashboard, { store: dash, actions }), moves);
  await sync.close();
  state.close();
  function Counter() {
    const [n, set] = useState(0);
    useInput(() => set((x) => x + 1));
    return createElement(Text, null, `keys: ${n}`);
  }
  const floorMs = await keyLatency(createElement(Counter), moves);
  return { dashMs, floorMs };
}

/**
 * A person answering 10 waiting jobs in a row (issue 29): 10 of the 1,000
 * jobs ask; enter opens the first question, then each `y` answers one (the
 * store written, as ii job answer does) and moves to the next, drawn. Against
 * the one-line app's keypress → frame.
 */
async function answers(stateDir) {
  const { createElement, useState } = await import('react');
  const { Text, useInput } = await import('ink');
  const { render } = await import('ink');
  const { RENDER_OPTIONS } = await import(join(dist, 'src', 'cli', 'dashboard', 'run.js'));
  const { openStateStore } = await import(join(dist, 'src', 'state', 'index.js'));
  const { createDashboardStore } = await import(join(dist, 'src', 'dashboard', 'view', 'store.js'));
  const { DashboardSync } = await import(join(dist, 'src', 'dashboard', 'io', 'sync.js'));
  const { createActions } = await import(join(dist, 'src', 'dashboard', 'io', 'actions.js'));
  const { Dashboard } = await import(join(dist, 'components', 'Dashboard.js'));
  const state = openStateStore({ dir: stateDir });
  const asking = state.jobs
    .list('bench')
    .filter((j) => j.status === 'active')
    .slice(0, 10);
  for (const j of asking)
    state.asks.open(j.id, {
      tool_kind: 'execute',
      title: 'Run npm test',
      command: 'npm test',
      paths: [],
      diff_preview: null,
      options: [{ id: 'once', name: 'Allow', kind: 'allow_once' }],
    });
  const dash = createDashboardStore({ repo: null, repoLabel: 'bench' });
  const sync = new DashboardSync({ state, dash });
  sync.loadAll();
  const actions = createActions({
    state,
    dash,
    repoRoot: null,
    quit: () => {},
    onChanged: () => sync.refreshJobs(),
  });
  const t = fakeTerminal({});
  const app = render(createElement(Dashboard, { store: dash, actions }), {
    ...RENDER_OPTIONS,
    stdout: t.stdout,
    stdin: t.stdin,
  });
  await until(() => t.frames.n > 0 && t.stdin.listenerCount('readable') > 0, 'the first frame');
  t.stdin.press('\r');
  await until(() => dash.getState().nav.overlay === 'ask', 'the question open');
  const out = [];
  for (let i = 0; i < asking.length; i++) {
    await pause(40);
    const before = t.frames.n;
    const t0 = now();
    t.stdin.press('y');
    await until(() => t.frames.n > before, 'a frame after y');
    out.push(t.frames.at - t0);
  }
  const left = asking.filter((j) => state.asks.openFor(j.id)).length;
  app.unmount();
  await sync.close();
  state.close();
  if (left) throw new Error(`${left} of 10 questions left unanswered`);
  function Counter() {
    const [n, set] = useState(0);
    useInput(() => set((x) => x + 1));
    return createElement(Text, null, `keys: ${n}`);
  }
  const floorMs = await keyLatency(createElement(Counter), ['y'], 10);
  return { answerMs: out, answerFloor: floorMs };
}

function rss(stateDir) {
  const r = spawnSync(process.execPath, [join(root, 'bench', 'dashboard-rss.child.js'), dist, stateDir], {
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (r.status !== 0) throw new Error(`rss child failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1));
  if (out.jobs !== 10_000) throw new Error(`rss child loaded ${out.jobs} jobs`);
  return out;
}

const row = (name, value, floor, unit, goal) => ({
  name,
  value: round(value),
  unit,
  floor: round(floor),
  ratio: round(value / floor),
  goal,
});

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-dash-'));
  try {
    const stateDir = join(tmp, 'thousand', 'incrementum');
    seed(stateDir, 1000, 10);
    trace('seeded 1,000 jobs');
    const { lat, floor } = await storeLatency(tmp, stateDir);
    trace('store latency done');
    const { dashMs, floorMs } = await keys(stateDir);
    trace('keypresses done');
    const { answerMs, answerFloor } = await answers(stateDir);
    trace('answers done');
    const rssDir = join(tmp, 'ten-thousand', 'incrementum');
    seed(rssDir, 10_000, 1);
    trace('seeded 10,000 jobs');
    const mem = rss(rssDir);
    return [
      row(
        'another process writes a job → in the store, p95 (1,000 jobs)',
        quantile(lat, 0.95),
        quantile(floor, 0.95),
        'ms',
        '≤ 100 ms',
      ),
      row('keypress → frame, median (1,000 jobs)', median(dashMs), median(floorMs), 'ms', '≤ 16 ms'),
      row(
        'keypress → frame, p95 (1,000 jobs)',
        quantile(dashMs, 0.95),
        quantile(floorMs, 0.95),
        'ms',
        '≤ 33 ms',
      ),
      row(
        'y → frame answering 10 waiting jobs in a row, median (1,000 jobs)',
        median(answerMs),
        median(answerFloor),
        'ms',
        '≤ 16 ms',
      ),
      row(
        'y → frame answering 10 waiting jobs in a row, max (1,000 jobs)',
        Math.max(...answerMs),
        Math.max(...answerFloor),
        'ms',
        '≤ 33 ms',
      ),
      row('RSS, 10,000 jobs loaded, watched and drawn', mem.value, mem.floor, 'MB', '≤ 100 MB'),
      row('peak RSS, 10,000 jobs', mem.peak, mem.floor, 'MB', '≤ 150 MB'),
      // What the dashboard's code alone takes (Ink's among it), before any job is read.
      row("RSS after loading the dashboard's modules (no job read)", mem.modules, mem.floor, 'MB', 'report'),
    ];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
