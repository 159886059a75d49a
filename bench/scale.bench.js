// Scale figures of the [backlog] issue, each against a floor measured in the
// same run:
// - 32 real concurrent jobs (`ii job do` runners, each with its scripted agent
//   streaming ~50 session/update notifications a second) with the dashboard
//   open on their state dir, in this process through the real Dashboard and
//   Ink's render path: keypress → frame (against a one-line Ink app under
//   the same load), the dashboard's CPU between keys (against a bare follower
//   that reads and parses every appended log line), and another process's
//   job write → the store (against a raw fs.watch notification);
// - the Backlog column with 10,000 todos (deps, blocked ones, 1,000 jobs
//   behind them): keypress → frame moving through the column, and another
//   process's new todo → on the board (a frame drawn from it);
// - what an idle concurrent job costs beyond its agent: the `ii job do`
//   runner's private memory, CPU and open files while its agent is in a long
//   turn, against a bare node process idling beside it.
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { floorKeyLatency, keyLatency, now, pause, until } from './ink-keys.js';
import { median, quantile, round } from './stats.js';

// The dashboard ships React's production build (bin/ii.js sets this).
process.env.NODE_ENV ??= 'production';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const II = join(root, 'bin', 'ii.js');
const trace = (m) => process.env.BENCH_DEBUG && process.stderr.write(`scale bench: ${m}\n`);

/**
 * Concurrent jobs, of which REAL are real runners with their agents (the rest
 * simulated, bench/scale-sim.child.js), and how long each real agent streams
 * (it is stopped once measured). 32 real jobs do not run on a 2-core machine:
 * 64 node processes starting at once had no agent running after 150 s.
 */
const JOBS = Number(process.env.BENCH_SCALE_JOBS ?? 32);
const REAL = Math.min(JOBS, Number(process.env.BENCH_SCALE_REAL ?? 8));
const STREAM_S = 90;
/** Updates a second each scripted agent aims at. */
const RATE = 50;
const TODOS = Number(process.env.BENCH_SCALE_TODOS ?? 10_000);
const IDLE_JOBS = 4;

const row = (name, value, floor, unit, goal) => ({
  name,
  value: round(value),
  unit,
  ...(floor == null ? {} : { floor: round(floor), ratio: round(value / floor) }),
  goal,
});

const dash = (p) => import(join(dist, p));

/** A line-oriented child process: send a line, read the next line back. */
function lineChild(args) {
  const p = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = [];
  const waiters = [];
  createInterface({ input: p.stdout }).on('line', (l) =>
    waiters.length ? waiters.shift()(l) : lines.push(l),
  );
  const next = () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((r) => waiters.push(r)));
  const exited = new Promise((r) => p.on('exit', r));
  return {
    next,
    send: (l) => p.stdin.write(l + '\n'),
    end: () => (p.stdin.end(), exited),
  };
}

function git(cwd, ...args) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A repository on the scripted agent whose tests pass, and the environment its runners get. */
function project(tmp) {
  const repo = join(tmp, 'repo');
  mkdirSync(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# scale\n');
  writeFileSync(
    join(repo, 'incrementum.toml'),
    '[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["true"]\nauto-commit = false\n',
  );
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=b', '-c', 'user.email=b@example.com', 'commit', '-qm', 'base');
  const env = {
    ...process.env,
    NO_COLOR: '1',
    XDG_STATE_HOME: join(tmp, 'state'),
    XDG_CONFIG_HOME: join(tmp, 'config'),
    HOME: tmp,
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@example.com',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@example.com',
  };
  return { repo, env, stateDir: join(tmp, 'state', 'incrementum') };
}

/** `n` `ii job do` runners, each its own process, each agent playing `turn` as its first implement turn. */
/** Each runner as ii run starts one (its node flags), in the foreground for the bench to watch. */
async function startRunners(tmp, p, n, turn) {
  const { RUNNER_NODE_ARGS } = await dash('src/job/detached.js');
  const scenarios = join(tmp, 'scenarios');
  mkdirSync(scenarios, { recursive: true });
  writeFileSync(join(scenarios, 'default.json'), JSON.stringify({ implement: [turn] }));
  const logs = join(tmp, 'runner-logs');
  mkdirSync(logs, { recursive: true });
  const out = [];
  for (let i = 0; i < n; i++) {
    const log = openSync(join(logs, `${i}.log`), 'w');
    const child = spawn(
      process.execPath,
      [...RUNNER_NODE_ARGS, II, 'job', 'do', '--title', `scale job ${i}`],
      {
        cwd: p.repo,
        env: { ...p.env, II_SCRIPTED_SCENARIO: scenarios },
        stdio: ['ignore', 'ignore', log],
      },
    );
    closeSync(log);
    out.push({ child, log: join(logs, `${i}.log`), exit: new Promise((r) => child.on('exit', r)) });
  }
  return out;
}

/** Stops runners as a person would (SIGTERM: each abandons its job and ends its agent), SIGKILL if one hangs. */
async function stopRunners(runners) {
  for (const r of runners) if (r.child.exitCode == null) r.child.kill('SIGTERM');
  const all = Promise.all(runners.map((r) => r.exit));
  const late = await Promise.race([all.then(() => false), pause(30_000).then(() => true)]);
  if (late) for (const r of runners) if (r.child.exitCode == null) r.child.kill('SIGKILL');
  await all;
}

/** Waits until `n` jobs of the repo are implementing with their agent started. */
async function untilAgentsRun(state, slug, n, ms, runners) {
  const end = Date.now() + ms;
  for (;;) {
    const jobs = state.jobs.list(slug, { activeOnly: true }).filter((j) => j.pid !== process.pid);
    const running = jobs.filter((j) => j.stage === 'implementing' && j.agent_sessions.length > 0);
    if (running.length >= n) return running;
    const dead = runners.find((r) => r.child.exitCode != null);
    if (dead) throw new Error(`a runner exited (${dead.child.exitCode}): ${readFileSync(dead.log, 'utf8')}`);
    if (Date.now() > end) throw new Error(`only ${running.length} of ${n} agents running after ${ms} ms`);
    await pause(200);
  }
}

/** session/update notifications in the jobs' current transcripts. */
function updatesSoFar(stateDir, jobs) {
  let n = 0;
  for (const j of jobs) {
    const t = j.agent_sessions.at(-1)?.transcript;
    if (!t) continue;
    const text = readFileSync(t.startsWith('/') ? t : join(stateDir, t), 'utf8');
    for (let i = text.indexOf('"session/update"'); i >= 0; i = text.indexOf('"session/update"', i + 1)) n++;
  }
  return n;
}

/** The dashboard's store and sync on a state dir, as src/cli/dashboard/run.ts sets them up. */
async function openDashboard(stateDir, repo) {
  const { openStateStore } = await dash('src/state/index.js');
  const { createDashboardStore } = await dash('src/dashboard/view/store.js');
  const { DashboardSync } = await dash('src/dashboard/io/sync.js');
  const { createActions } = await dash('src/dashboard/io/actions.js');
  const { Dashboard } = await dash('components/Dashboard.js');
  const { createElement } = await import('react');
  const { useStore } = await import('zustand');
  const { cursor, selectedCard } = await dash('src/dashboard/view/board.js');
  // What a keypress changes: where the cursor is, on which card.
  const selection = (s) => {
    const c = cursor(s);
    return `${s.nav.level} ${c.col}:${c.row} ${selectedCard(s)?.key}`;
  };
  const heap = await dash('src/cli/dashboard/heap.js');
  heap.tuneHeapForDashboard();
  const state = openStateStore({ dir: stateDir });
  const store = createDashboardStore({ repo, repoLabel: 'bench', color: true });
  const sync = new DashboardSync({ state, dash: store });
  sync.loadAll();
  // As run.ts does once the jobs are loaded (absent from builds before it).
  heap.followBoardSize?.(store);
  sync.start();
  await sync.ready();
  const actions = createActions({ state, dash: store, repoRoot: null, quit: () => {} });
  return {
    store,
    sync,
    element: createElement(Dashboard, { store, actions }),
    // What a frame must have seen for a keypress: the selection it made (as
    // text: running jobs' writes give the board new nav objects all the time).
    selection: { get: () => selection(store.getState()), use: () => useStore(store, selection) },
    backlog: { get: () => store.getState().backlog, use: () => useStore(store, (s) => s.backlog) },
    async close() {
      await sync.close();
      state.close();
    },
  };
}

/** Job write by another process → the store, p95, with the fs.watch floor interleaved. */
async function writeToStore(tmp, d, stateDir, slug, jobId, n) {
  const floorFile = join(tmp, 'floor.txt');
  writeFileSync(floorFile, '');
  const w = lineChild([join(root, 'bench', 'scale-writer.child.js'), dist, stateDir, slug, jobId, floorFile]);
  await w.next();
  const stageOf = () => d.store.getState().jobs.find((j) => j.id === jobId)?.stage;
  let before = stageOf();
  let seen = 0;
  const unsub = d.store.subscribe(() => {
    if (!seen && stageOf() !== before) seen = now();
  });
  let fsSeen = 0;
  const fw = watch(floorFile, () => (fsSeen ||= now()));
  const lat = [];
  const floor = [];
  const end = Date.now() + 20_000;
  for (let i = 0; i < n && Date.now() < end; i++) {
    before = stageOf();
    seen = 0;
    w.send('stage');
    const wrote = Number((await w.next()).split(' ')[0]);
    await until(() => seen > 0, 'the stage change in the store', 30_000);
    lat.push(Math.max(0, seen - wrote));
    fsSeen = 0;
    w.send('floor');
    const appended = Number((await w.next()).split(' ')[0]);
    await until(() => fsSeen > 0, 'the fs.watch event');
    floor.push(Math.max(0.01, fsSeen - appended));
    await pause(30);
  }
  fw.close();
  unsub();
  await w.end();
  return { lat, floor };
}

/** 1. JOBS real runners streaming, the dashboard open on them. */
async function concurrent(tmp) {
  const { openStateStore, repoSlug } = await dash('src/state/index.js');
  const p = project(tmp);
  const slug = repoSlug(p.repo);
  const state = openStateStore({ dir: p.stateDir });
  // A job another process writes to (write → store), held by this process so it is not stale.
  const todo = state.todos.create(slug, { title: 'write probe' });
  state.todos.setStatus(slug, todo.id, 'in_progress');
  const probe = state.jobs.create(slug, { todo_id: todo.id, pid: process.pid, host: hostname() });
  const gap = Math.round(1000 / RATE);
  const actions = [];
  for (let i = 0; i < STREAM_S * RATE; i++)
    actions.push({ type: 'message', text: `token ${i} ` }, { type: 'delay', ms: gap });
  const d = await openDashboard(p.stateDir, slug);
  const t0 = Date.now();
  const sim = lineChild([
    join(root, 'bench', 'scale-sim.child.js'),
    dist,
    p.stateDir,
    slug,
    JOBS - REAL,
    RATE,
  ]);
  await sim.next();
  const runners = await startRunners(tmp, p, REAL, { actions, usage: null });
  try {
    const jobs = await untilAgentsRun(state, slug, JOBS, 150_000, runners);
    const startup = (Date.now() - t0) / 1000;
    trace(`${JOBS} agents streaming after ${startup} s`);
    await pause(2000);
    const u0 = updatesSoFar(p.stateDir, jobs);
    const w0 = now();
    const moves = ['j', 'j', 'j', 'k', 'k', 'k'];
    let cpu = 0;
    // To the top of the Implementing column: the newest job, a real one, streaming in the live pane.
    let followCpu = 0;
    const dashMs = await keyLatency({
      budgetMs: 20_000,
      element: d.element,
      state: d.selection,
      prelude: Array(JOBS + 2).fill('k'),
      keys: moves,
      after: async () => {
        // Between keys: the board open, jobs streaming, no key pressed.
        const idleMs = 5000;
        const follow = lineChild([
          join(root, 'bench', 'scale-follow.child.js'),
          join(p.stateDir, 'jobs'),
          idleMs,
        ]);
        await pause(200);
        const c0 = process.cpuUsage();
        const t = performance.now();
        await pause(idleMs);
        const c = process.cpuUsage(c0);
        cpu = ((c.user + c.system) / 1000 / (performance.now() - t)) * 100;
        followCpu = Number(await follow.next());
        await follow.end();
      },
    });
    trace(`${dashMs.length} keys and idle CPU done`);
    const { lat, floor } = await writeToStore(tmp, d, p.stateDir, slug, probe.id, 30);
    trace(`${lat.length} writes → store done`);
    await d.close();
    const floorMs = await floorKeyLatency(moves);
    const rate = (updatesSoFar(p.stateDir, jobs) - u0) / ((now() - w0) / 1000) / JOBS;
    const still = state.jobs
      .list(slug, { activeOnly: true })
      .filter((j) => j.pid !== process.pid && j.stage === 'implementing').length;
    const n = `${JOBS} jobs streaming (${REAL} real, ${JOBS - REAL} simulated)`;
    return [
      {
        name: `${n}: session/updates a second per job while measured (${still - (JOBS - REAL)} real still streaming at the end; all started in ${round(startup, 0)} s)`,
        value: round(rate),
        unit: '/s',
        goal: `≈ ${RATE}/s`,
      },
      row(`${n}: keypress → frame, median`, median(dashMs), median(floorMs), 'ms', '≤ 16 ms'),
      row(`${n}: keypress → frame, p95`, quantile(dashMs, 0.95), quantile(floorMs, 0.95), 'ms', '≤ 33 ms'),
      row(`${n}: dashboard CPU between keys (floor: a bare log follower)`, cpu, followCpu, '% core', '≤ 25%'),
      row(
        `${n}: another process writes a job → in the store, p95`,
        quantile(lat, 0.95),
        quantile(floor, 0.95),
        'ms',
        '≤ 100 ms',
      ),
    ];
  } finally {
    await sim.end();
    await stopRunners(runners);
    await d.close().catch(() => {});
    state.close();
  }
}

/**
 * A backlog of TODOS todos in another process: a fifth wait on the todo
 * before them (blocked while it is open), a tenth are done (some of them deps
 * of ready todos), and 1,000 jobs behind them, 300 failed twice (blocked on
 * attempts). Stamped an hour ago, as a board's history is.
 */
function seedBacklog(stateDir, repo) {
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
       const repo = ${JSON.stringify(repo)};
       let prev = null;
       for (let i = 0; i < ${TODOS}; i++) {
         const deps = i % 5 === 1 && prev ? [prev] : [];
         const t = s.todos.create(repo, { title: 'todo ' + String(i).padStart(5, '0') + ' of the backlog', priority: i % 4, deps });
         if (i % 10 === 0) s.todos.setStatus(repo, t.id, 'done');
         if (i < 1000) {
           const runs = i < 300 ? 2 : 1;
           for (let k = 0; k < runs; k++) {
             const j = s.jobs.create(repo, { todo_id: t.id, pid: 1, host: 'elsewhere' });
             s.jobs.finish(j.id, i < 300 ? 'failed' : 'completed', 'x');
           }
         }
         prev = t.id;
       }
       s.close();`,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`seeding the backlog failed: ${r.stderr}`);
}

/**
 * BENCH_BACKLOG_STEPS=1: where a new todo's time goes, step by step, in this
 * process (printed to stderr, median and p95 of each): the write's fs.watch
 * event, the sync's flush (or its fallback poll) reading it, the store
 * holding it, React rendering it, Ink writing the frame; and the GC pauses
 * between the write and the frame (PerformanceObserver).
 */
function backlogSteps(d, stateDir) {
  const samples = [];
  let cur = null;
  const mark = (k) => {
    if (cur && cur[k] === undefined) cur[k] = now();
  };
  const w = watch(stateDir, (_e, name) => name?.startsWith('state.db') && mark('fs'));
  const gcs = [];
  const inks = [];
  const yogas = [];
  const obs = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) gcs.push({ at: performance.timeOrigin + e.startTime, ms: e.duration });
  });
  obs.observe({ entryTypes: ['gc'] });
  const sync = d.sync;
  const wrap = (name, key) => {
    const f = sync[name].bind(sync);
    sync[name] = (...a) => {
      mark(key);
      return f(...a);
    };
  };
  wrap('flush', 'flush');
  wrap('tick', 'poll');
  // Each write adds one ready todo: the first backlog with more is the one that has it.
  const unsub = d.store.subscribe((s) => cur && s.backlog.ready.length > cur.base && mark('store'));
  const use = d.backlog.use;
  d.backlog.use = () => {
    const b = use();
    if (cur && b.ready.length > cur.base) mark('render');
    return b;
  };
  return {
    /** Ink's onRender: each frame's time in Ink's renderer. */
    onRender({ renderTime }) {
      inks.push({ at: now() - renderTime, ms: renderTime });
    },
    /** React's commit reaching Ink (its root's onRender, before the frame throttle) and Yoga's layout. */
    inspect(ink) {
      const root = ink.rootNode;
      const layout = root.onComputeLayout;
      root.onComputeLayout = () => {
        const t0 = now();
        layout();
        yogas.push({ at: t0, ms: now() - t0 });
      };
      const onRender = root.onRender;
      root.onRender = () => {
        mark('commit');
        onRender();
      };
    },
    /** Before the write is asked for (its file event may come before its reply). */
    begin() {
      cur = {
        base: d.store.getState().backlog.ready.length,
        hr0: process.hrtime.bigint(),
        cpu0: process.cpuUsage(),
      };
    },
    start(id, wrote) {
      cur.id = id;
      cur.wrote = wrote;
    },
    end(frameAt) {
      cur.frame = frameAt;
      cur.hr1 = process.hrtime.bigint();
      const cpu = process.cpuUsage(cur.cpu0);
      cur.cpu = (cpu.user + cpu.system) / 1000;
      cur.ink = inks.filter((g) => g.at >= cur.wrote && g.at <= frameAt);
      cur.yoga = yogas.filter((g) => g.at >= cur.wrote && g.at <= frameAt).reduce((n, g) => n + g.ms, 0);
      cur.gc = gcs.filter((g) => g.at >= cur.wrote && g.at <= frameAt).reduce((n, g) => n + g.ms, 0);
      samples.push(cur);
      cur = null;
    },
    report() {
      w.close();
      obs.disconnect();
      // With --cpu-prof: the windows (µs, the profile's clock) to read its samples in.
      if (process.env.BENCH_BACKLOG_STEPS.endsWith('.json'))
        writeFileSync(
          process.env.BENCH_BACKLOG_STEPS,
          JSON.stringify(samples.map((x) => [Number(x.hr0 / 1000n), Number(x.hr1 / 1000n)])),
        );
      unsub();
      const steps = [
        ['write → fs.watch event', (x) => x.fs - x.wrote],
        ['fs.watch → flush (debounce)', (x) => (x.flush ?? x.poll) - x.fs],
        ['flush → store', (x) => x.store - (x.flush ?? x.poll)],
        ['store → render', (x) => x.render - x.store],
        ['render → commit (React)', (x) => x.commit - x.render],
        ['  of which Yoga layout', (x) => x.yoga],
        ['commit → frame (throttle, Ink)', (x) => x.frame - x.commit],
        ['write → frame', (x) => x.frame - x.wrote],
        ['GC pauses in it', (x) => x.gc],
        ["Ink's renderer in it", (x) => x.ink.reduce((n, g) => n + g.ms, 0)],
        ['frames in it', (x) => x.ink.length],
        ['CPU of this process in it', (x) => x.cpu],
      ];
      const f = (v) => (Number.isFinite(v) ? v.toFixed(1).padStart(7) : '      -');
      process.stderr.write(`backlog steps, ${samples.length} samples (ms): median, p95, max\n`);
      for (const [name, fn] of steps) {
        const v = samples.map(fn).filter(Number.isFinite);
        process.stderr.write(
          `  ${name.padEnd(30)} ${f(median(v))} ${f(quantile(v, 0.95))} ${f(Math.max(...v))}\n`,
        );
      }
      process.stderr.write(
        `  through the poll: ${samples.filter((x) => x.poll !== undefined && (x.flush === undefined || x.poll < x.flush)).length}\n`,
      );
      for (const x of samples)
        process.stderr.write(
          `  ${['fs', 'flush', 'poll', 'store', 'render', 'commit', 'frame'].map((k) => `${k} ${f(x[k] - x.wrote)}`).join(' ')} gc ${f(x.gc)}\n`,
        );
    },
  };
}

/** 2. The Backlog column with TODOS todos. */
async function bigBacklog(tmp) {
  const stateDir = join(tmp, 'backlog', 'incrementum');
  const repo = 'bench-backlog';
  const s0 = Date.now();
  seedBacklog(stateDir, repo);
  trace(`seeded ${TODOS} todos in ${Date.now() - s0} ms`);
  const d = await openDashboard(stateDir, repo);
  const b = d.store.getState().backlog;
  if (b.ready.length + b.blocked.length < TODOS / 2) throw new Error('the backlog did not load');
  trace(`${b.ready.length} ready, ${b.blocked.length} blocked`);
  // Down the column a screen and more, then back up.
  const moves = [...Array(40).fill('j'), ...Array(20).fill('k')];
  const floorFile = join(tmp, 'todo-floor.txt');
  writeFileSync(floorFile, '');
  const lat = [];
  const floor = [];
  // The board's CPU (this process's) from asking for the write to the frame with it.
  const cpu = [];
  const steps = process.env.BENCH_BACKLOG_STEPS ? backlogSteps(d, stateDir) : null;
  const dashMs = await keyLatency({
    ...(steps ? { onRender: steps.onRender, inspect: steps.inspect } : {}),
    element: d.element,
    state: d.selection,
    also: d.backlog,
    // The board opens on a job: to the Backlog column, the first.
    prelude: Array(12).fill('h'),
    keys: moves,
    after: async (frames) => {
      const w = lineChild([
        join(root, 'bench', 'scale-writer.child.js'),
        dist,
        stateDir,
        repo,
        '',
        floorFile,
      ]);
      await w.next();
      let fsSeen = 0;
      const fw = watch(floorFile, () => (fsSeen ||= now()));
      for (let i = 0; i < 20; i++) {
        steps?.begin();
        const c0 = process.cpuUsage();
        w.send('todo');
        const [wrote, id] = (await w.next()).split(' ');
        steps?.start(id, Number(wrote));
        let shown = null;
        await until(
          () =>
            (shown ??= d.store.getState().backlog.ready.some((t) => t.id === id) ? d.backlog.get() : null),
          'the new todo in the store',
          30_000,
        );
        await until(() => frames.also === shown, 'a frame drawn with the new todo', 30_000);
        lat.push(frames.at - Number(wrote));
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1000);
        steps?.end(frames.at);
        fsSeen = 0;
        w.send('floor');
        const appended = Number((await w.next()).split(' ')[0]);
        await until(() => fsSeen > 0, 'the fs.watch event');
        floor.push(Math.max(0.01, fsSeen - appended));
        await pause(50);
      }
      fw.close();
      steps?.report();
      await w.end();
    },
  });
  await d.close();
  const floorMs = await floorKeyLatency(moves);
  const n = `backlog of ${TODOS.toLocaleString('en')} todos`;
  return [
    row(`${n}: keypress → frame down the column, median`, median(dashMs), median(floorMs), 'ms', '≤ 16 ms'),
    row(`${n}: keypress → frame, p95`, quantile(dashMs, 0.95), quantile(floorMs, 0.95), 'ms', '≤ 33 ms'),
    row(
      `${n}: another process writes a todo → on the board (frame), p95`,
      quantile(lat, 0.95),
      quantile(floor, 0.95),
      'ms',
      '≤ 100 ms',
    ),
    // What load turns into waiting: the CPU a new todo costs the board (and this bench's polling).
    row(`${n}: the board's CPU per new todo (write → frame), median`, median(cpu), null, 'ms', 'report'),
    row(`${n}: the board's CPU per new todo, p95`, quantile(cpu, 0.95), null, 'ms', 'report'),
  ];
}

/** Private memory (MB), open files and CPU ticks of a process, from /proc. */
function procFigures(pid) {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    privateMb: (kb('Private_Clean') + kb('Private_Dirty') + kb('Private_Hugetlb')) / 1024,
    rssMb: kb('Rss') / 1024,
    fds: readdirSync(`/proc/${pid}/fd`).length,
    // utime + stime, in clock ticks (USER_HZ, 100 on Linux).
    ticks: Number(f[11]) + Number(f[12]),
  };
}

/** Every process whose parent chain reaches `pid`, with its command line. */
function descendants(pid) {
  const parent = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const out = [];
  for (const [p] of parent) {
    for (let at = parent.get(p); at; at = parent.get(at))
      if (at === pid) {
        let cmd = '';
        try {
          cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' ');
        } catch {}
        out.push({ pid: p, cmd });
        break;
      }
  }
  return out;
}

/** 3. What an idle concurrent job costs beyond its agent. */
async function idleJob(tmp) {
  const { openStateStore, repoSlug } = await dash('src/state/index.js');
  const p = project(tmp);
  const slug = repoSlug(p.repo);
  const runners = await startRunners(tmp, p, IDLE_JOBS, {
    actions: [{ type: 'delay', ms: 600_000 }],
    usage: null,
  });
  // The floor: a bare node process, idling beside them.
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  const state = openStateStore({ dir: p.stateDir });
  try {
    await untilAgentsRun(state, slug, IDLE_JOBS, 90_000, runners);
    // Past the start's one-off work (module loading, the workspace, the agent's handshake).
    await pause(3000);
    const pids = runners.map((r) => r.child.pid);
    // The workspace's long-lived git processes (src/vcs/git-pipe.ts) are the
    // runner's own: counted into its figures below, not taken for strays.
    const isGitPipe = (cmd) =>
      /\bgit\b/.test(cmd) &&
      /cat-file|update-ref|diff-tree|hash-object/.test(cmd) &&
      /--(batch|stdin)/.test(cmd);
    const pipesOf = (pid) => descendants(pid).filter((d) => isGitPipe(d.cmd));
    const others = pids.flatMap((pid) =>
      descendants(pid).filter(
        (d) => !d.cmd.includes(join('agent', 'scripted', 'main.js')) && !isGitPipe(d.cmd),
      ),
    );
    if (others.length) throw new Error(`an idle runner has a child other than its agent: ${others[0].cmd}`);
    /** A runner's figures with its git processes' added (they live and die with it). */
    const withPipes = (pid) => {
      const own = procFigures(pid);
      for (const g of pipesOf(pid)) {
        try {
          const p = procFigures(g.pid);
          own.privateMb += p.privateMb;
          own.rssMb += p.rssMb;
          own.fds += p.fds;
          own.ticks += p.ticks;
        } catch {} // ended meanwhile
      }
      return own;
    };
    const figures = () => [...pids.map(withPipes), procFigures(bare.pid)];
    const before = figures();
    const t0 = performance.now();
    await pause(8000);
    const wall = (performance.now() - t0) / 1000;
    const after = figures();
    const cpu = after.map((a, i) => ((a.ticks - before[i].ticks) / 100 / wall) * 100);
    const f = after.pop();
    const fCpu = cpu.pop();
    const alive = descendants(pids[0]).length;
    return [
      row(
        `idle job beyond its agent: runner private memory, median of ${IDLE_JOBS} (RSS ${round(median(after.map((a) => a.rssMb)), 0)} MB)`,
        median(after.map((a) => a.privateMb)),
        f.privateMb,
        'MB',
        '≤ 40 MB',
      ),
      row(
        `idle job beyond its agent: runner CPU over ${round(wall, 0)} s`,
        median(cpu),
        Math.max(fCpu, 0.1),
        '% core',
        '≤ 2%',
      ),
      row(
        `idle job beyond its agent: runner open fds (agent processes: ${alive})`,
        median(after.map((a) => a.fds)),
        f.fds,
        '',
        'report',
      ),
    ];
  } finally {
    bare.kill();
    await stopRunners(runners);
    state.close();
  }
}

/** Ends any process still running in `dir` (a runner's agent left behind would be a defect). */
function leftBehind(dir) {
  const left = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readlinkSync(`/proc/${d}/cwd`).startsWith(dir)) left.push(Number(d));
    } catch {}
  }
  for (const pid of left) process.kill(pid, 'SIGKILL');
  return left.length;
}

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-scale-'));
  try {
    const rows = [];
    // BENCH_SCALE_PARTS=idle,backlog,jobs runs only those parts.
    const parts = (process.env.BENCH_SCALE_PARTS ?? 'idle,backlog,jobs').split(',');
    if (parts.includes('idle')) rows.push(...(await idleJob(join(tmp, 'idle'))));
    trace('idle job done');
    if (parts.includes('backlog')) rows.push(...(await bigBacklog(tmp)));
    trace('backlog done');
    if (parts.includes('jobs')) rows.push(...(await concurrent(join(tmp, 'concurrent'))));
    const left = leftBehind(tmp);
    if (left) throw new Error(`${left} processes were left running`);
    return rows;
  } finally {
    leftBehind(tmp);
    rmSync(tmp, { recursive: true, force: true });
  }
}
