// The shared store past one machine (issue 31), against a private PostgreSQL
// server this bench starts (test/helpers/pg-server.ts), each figure beside a
// floor measured in the same run:
// - `ii job list --all --json` (the built CLI, a process per call) with 1,000
//   jobs / 10,000 commits on PostgreSQL, floor: the same on SQLite. The data
//   is made in SQLite and moved with `ii state migrate --to <url>`, as a
//   user would.
// - A write on one connection → another connection's watch (LISTEN/NOTIFY)
//   and its read of what changed show it: p95 on loopback, goal ≤ 150 ms;
//   floor: the write's own round trip.
// - 3 machines (clones of one bare repository, own state dirs, HOME, config,
//   II_HOST) × `ii run --jobs 8` at once on 24 todos with the scripted agent
//   (a file written, then 30 s of streamed text), one database: todos run
//   more than once (goal 0), claims lost to another runner (a race
//   resolved: reported), and the wall time.
// - Meanwhile, on each machine, its dashboard on the shared store (built as
//   `ii dashboard` builds it, bench/board-keys.child.js) is driven by
//   keypresses while the jobs run: keypress → frame (the write of a key to
//   the first frame drawn from a render that saw the selection it made,
//   bench/ink-keys.js, as the dashboard and scale benches time it), p95 and
//   median per board over ≥ 100 presses made while the board showed a
//   running job, goal p95 ≤ 33 ms, and the board's own CPU time from a press
//   to its frame. Floor: the same board and presses on one machine's SQLite
//   state while its `ii run --jobs 8` runs 8 todos, in the same run. The
//   load average during each is reported: on a shared 2-core machine the
//   wall figures are mostly time spent waiting for a core.
//   BENCH_SHARED_ONLY=machines runs these rows alone (=list: the job list's
//   alone); BENCH_DEBUG prints each board's queries, BENCH_BOARD_PROF=dir
//   writes their CPU profiles (BENCH_RUN_PROF=dir each ii run's), BENCH_BOARD_TRACE=prefix each press's trace,
//   BENCH_BOARD_NICE=n runs them at that priority, BENCH_RUN_NICE=n passes
//   `--nice n` to each `ii run` (0: the jobs at the bench's own priority),
//   BENCH_BOARD_TURNS=1 presses the boards one after another (see TURNS),
//   BENCH_PG_STATS=file writes the server's statements of the whole run to
//   file as JSON (pg_stat_statements: the most called, and those that took
//   the longest in all, a lock's wait included), with their totals.
// Sized for a 2-core machine: about five minutes in all under load.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, setPriority, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { adminClient, createDatabase, seedJobs } from './seed-store.js';
import { median, quantile, round, timeMs } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const II = join(root, 'bin', 'ii.js');
const { repoSlug } = await import(join(root, 'dist', 'src', 'state', 'index.js'));
const { openPgStore } = await import(join(root, 'dist', 'src', 'state', 'pg', 'index.js'));
// Node 24 runs the TypeScript helper as it is (type stripping).
const { startPgServer } = await import(join(root, 'test', 'helpers', 'pg-server.ts'));

const TOML =
  '[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\n';
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@example.com',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@example.com',
};

const git = (cwd, ...args) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** A repository with the scripted agent's config, cloned from (and pushing to) a bare one. */
function sharedRepo(tmp) {
  const seed = join(tmp, 'seed');
  mkdirSync(seed);
  git(seed, 'init', '-q', '-b', 'main');
  writeFileSync(join(seed, 'README.md'), '# bench\n');
  writeFileSync(join(seed, 'incrementum.toml'), TOML);
  git(seed, 'add', '-A');
  execFileSync('git', ['commit', '-qm', 'initial'], { cwd: seed, env: { ...process.env, ...GIT_ENV } });
  const bare = join(tmp, 'shared.git');
  git(tmp, 'clone', '-q', '--bare', seed, bare);
  return bare;
}

/** A machine: a clone of the bare repository and its own state, config and host name. */
function machine(tmp, bare, name, url) {
  const home = join(tmp, `machine-${name}`);
  mkdirSync(home);
  const repo = join(home, 'repo');
  git(home, 'clone', '-q', '--no-local', bare, repo);
  const env = {
    ...GIT_ENV,
    XDG_STATE_HOME: join(home, 'state'),
    XDG_CONFIG_HOME: join(home, 'config'),
    HOME: home,
    II_HOST: `machine-${name}`,
    NO_COLOR: '1',
    ...(url ? { II_DATABASE_URL: url } : {}),
  };
  return { name, home, repo: git(repo, 'rev-parse', '--show-toplevel'), env };
}

function ii(m, args, extraEnv = {}) {
  const r = spawnSync(process.execPath, [II, ...args], {
    cwd: m.repo,
    env: { ...process.env, ...m.env, ...extraEnv },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`ii ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

async function query(url, sql, params = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/** `ii job list --all --json` through the CLI, SQLite and PostgreSQL on the same 1,000 jobs. */
async function jobList(server, tmp, bare) {
  const url = await createDatabase(server, 'ii_bench_list');
  const m = machine(tmp, bare, 'list', null);
  seedJobs(join(m.env.XDG_STATE_HOME, 'incrementum'), repoSlug(m.repo), {
    finish: (j) => (j % 3 === 0 ? 'failed' : 'completed'),
  });
  ii(m, ['state', 'migrate', '--to', url]);
  await query(url, 'ANALYZE');
  const onPg = { II_DATABASE_URL: url };
  const a = JSON.parse(ii(m, ['job', 'list', '--all', '--json']));
  const b = JSON.parse(ii(m, ['job', 'list', '--all', '--json'], onPg));
  if (a.length !== 1000 || b.length !== 1000)
    throw new Error(`listed ${a.length} and ${b.length} jobs, not 1,000`);
  const times = { lite: [], pg: [], liteTodo: [], pgTodo: [] };
  // Interleaved, so both see the same machine load. ii todo list (one todo)
  // is what a command costs before the listing: start-up, connection, schema check.
  for (let i = 0; i < 7; i++) {
    times.lite.push(await timeMs(() => ii(m, ['job', 'list', '--all', '--json'])));
    times.pg.push(await timeMs(() => ii(m, ['job', 'list', '--all', '--json'], onPg)));
    times.liteTodo.push(await timeMs(() => ii(m, ['todo', 'list', '--json'])));
    times.pgTodo.push(await timeMs(() => ii(m, ['todo', 'list', '--json'], onPg)));
  }
  const row = (name, pgMs, liteMs) => ({
    name,
    value: round(median(pgMs)),
    unit: 'ms',
    floor: round(median(liteMs)),
    ratio: round(median(pgMs) / median(liteMs)),
    goal: 'report (floor: the same on SQLite)',
  });
  return [
    row(
      'ii job list --all --json, 1,000 jobs / 10,000 commits, PostgreSQL (CLI), median',
      times.pg,
      times.lite,
    ),
    row(
      'ii todo list --json (1 todo; its 1,000 jobs’ briefs), PostgreSQL, median',
      times.pgTodo,
      times.liteTodo,
    ),
  ];
}

/** A write on one connection until another connection's watch has read it back. */
async function watchLatency(server) {
  const url = await createDatabase(server, 'ii_bench_watch');
  const writer = await openPgStore(url);
  const reader = await openPgStore(url);
  const REPO = 'bench-watch';
  const seenAt = new Map();
  let last = await reader.jobs.version();
  let reading = Promise.resolve();
  // A board's loop: on each notice, read the todos changed after the last version seen.
  const stop = await reader.watch(() => {
    reading = reading.then(async () => {
      const v = await reader.jobs.version();
      for (const t of await reader.todos.listChangedAfter(REPO, last))
        if (!seenAt.has(t.id)) seenAt.set(t.id, process.hrtime.bigint());
      last = Math.max(last, v);
    });
  });
  try {
    const latencies = [];
    const writes = [];
    for (let i = 0; i < 150; i++) {
      const t0 = process.hrtime.bigint();
      const todo = await writer.todos.create(REPO, { title: `todo ${i}` });
      writes.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const end = Date.now() + 5000;
      while (!seenAt.has(todo.id)) {
        if (Date.now() > end) throw new Error(`todo ${i} was not seen by the watcher within 5 s`);
        await new Promise((r) => setTimeout(r, 1));
      }
      latencies.push(Number(seenAt.get(todo.id) - t0) / 1e6);
    }
    return [
      {
        name: 'write → other connection watch + read sees it, p95 (150 writes)',
        value: round(quantile(latencies, 0.95)),
        unit: 'ms',
        floor: round(median(writes)),
        ratio: round(quantile(latencies, 0.95) / median(writes)),
        goal: '≤ 150 ms (floor: the write, median)',
      },
      {
        name: 'write → other connection watch + read sees it, median',
        value: round(median(latencies)),
        unit: 'ms',
        goal: 'report',
      },
    ];
  } finally {
    await stop();
    await writer.close();
    await reader.close();
  }
}

/** Presses each board makes that change its selection (≥ 100, the figure's sample). */
const PRESSES = Number(process.env.BENCH_BOARD_PRESSES ?? 120);

/**
 * The scripted agent's scenario for the run's jobs: a file written, then a
 * turn streaming STREAM_S seconds of text (10 updates a second), so that the
 * boards are pressed while jobs run and stream, not after.
 */
// BENCH_BOARD_TURNS=1: the boards are pressed one after another, not at once
// (three machines' boards each have their own cores; on one box, pressed at
// once, they mostly wait for each other); the jobs stream longer to last.
const TURNS = process.env.BENCH_BOARD_TURNS === '1';
const STREAM_S = Number(process.env.BENCH_BOARD_STREAM_S ?? (TURNS ? 90 : 30));
function scenario(tmp) {
  const stream = [];
  for (let i = 0; i < STREAM_S * 10; i++)
    stream.push({ type: 'message', text: `token ${i} ` }, { type: 'delay', ms: 100 });
  const scenarios = join(tmp, 'scenarios');
  mkdirSync(scenarios, { recursive: true });
  writeFileSync(
    join(scenarios, 'default.json'),
    JSON.stringify({
      implement: [
        {
          actions: [{ type: 'write', path: 'work.txt', content: 'done\n' }, ...stream],
        },
      ],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Do the work' }] }],
    }),
  );
  return scenarios;
}

/** A machine's dashboard (bench/board-keys.child.js), loaded: `go()` starts its presses, `done` is its result. */
async function board(m, floor = false) {
  // BENCH_BOARD_PROF=dir: a CPU profile of each board into dir.
  const prof = process.env.BENCH_BOARD_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_BOARD_PROF}`]
    : [];
  const c = spawn(
    process.execPath,
    [
      ...prof,
      join(root, 'bench', 'board-keys.child.js'),
      join(root, 'dist'),
      PRESSES,
      ...(floor ? ['floor'] : []),
    ],
    {
      cwd: m.repo,
      env: { ...process.env, ...m.env, NODE_ENV: 'production' },
      stdio: ['pipe', 'pipe', 'pipe'],
      // A session of its own, as a person's terminal gives their board: where
      // Linux schedules each session as one (autogroup), the boards and the
      // floor app shared the bench's one session, each of the four a quarter
      // of what a board in its own terminal gets against the jobs' sessions.
      detached: true,
    },
  );
  // BENCH_BOARD_NICE=n: the boards at that priority (a diagnostic: how much of
  // their wall time is waiting for a core the jobs hold).
  if (process.env.BENCH_BOARD_NICE) setPriority(c.pid, Number(process.env.BENCH_BOARD_NICE));
  let err = '';
  c.stderr.on('data', (d) => {
    err += d;
    if (process.env.BENCH_DEBUG) process.stderr.write(d);
  });
  const lines = [];
  let wake = () => {};
  createInterface({ input: c.stdout }).on('line', (l) => (lines.push(l), wake()));
  const exited = new Promise((r) => c.on('exit', r));
  const line = async () => {
    while (!lines.length) {
      const code = await Promise.race([new Promise((r) => (wake = r)), exited]);
      if (code !== undefined && !lines.length) throw new Error(`board on ${m.name}: exit ${code}: ${err}`);
    }
    return lines.shift();
  };
  if ((await line()) !== 'ready') throw new Error(`board on ${m.name} did not start: ${err}`);
  // A board says "pressing" once it presses (the floor app does not).
  const pressing = floor ? null : line();
  return {
    go: () => c.stdin.write('go\n'),
    pressing,
    done: (pressing ?? Promise.resolve()).then(() => line()).then((l) => JSON.parse(l)),
    // Given a moment to exit on its own (a CPU profile is written at exit).
    kill: async () => {
      const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
      if (c.exitCode === null && c.signalCode === null) await exited;
      clearTimeout(t);
    },
  };
}

/** `ii run --jobs 8` on a machine until its backlog is done: its output. */
function runJobs(m) {
  return new Promise((res, rej) => {
    // BENCH_RUN_NICE=n: the jobs at that nice value (--nice; 0: at the bench's own).
    const nice = process.env.BENCH_RUN_NICE ? ['--nice', process.env.BENCH_RUN_NICE] : [];
    // BENCH_RUN_PROF=dir: a CPU profile of each ii run (not its jobs) into dir.
    const prof = process.env.BENCH_RUN_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_RUN_PROF}`]
      : [];
    const c = spawn(process.execPath, [...prof, II, 'run', '--jobs', '8', ...nice], {
      cwd: m.repo,
      env: { ...process.env, ...m.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    c.on('close', (code) =>
      code === 0 ? res(out) : rej(new Error(`ii run on ${m.name}: exit ${code}: ${out}`)),
    );
  });
}

/** The 1-minute load average, sampled each second while `p` runs: [median, max]. */
async function loadDuring(p) {
  const samples = [loadavg()[0]];
  const t = setInterval(() => samples.push(loadavg()[0]), 1000);
  try {
    return { result: await p, load: [median(samples), Math.max(...samples)] };
  } finally {
    clearInterval(t);
  }
}

/**
 * Runs `ii run --jobs 8` on each machine at once with each machine's board
 * pressed while the jobs run: the runs' outputs, each board's result, the
 * wall time of the runs and the load average meanwhile.
 */
async function runWithBoards(ms) {
  const boards = [];
  try {
    for (const m of ms) boards.push(await board(m));
    const floor = await board(ms[0], true);
    boards.push(floor);
    const t0 = Date.now();
    // Each board starts pressing once it shows a running job (in turn with
    // BENCH_BOARD_TURNS, each after the one before is done); the floor app with the first.
    const machines = boards.slice(0, -1);
    if (!TURNS) for (const b of machines) b.go();
    else machines[0].go();
    void Promise.race(machines.map((b) => b.pressing)).then(
      () => floor.go(),
      () => {},
    );
    const inTurn = async () => {
      const out = [];
      for (const [i, b] of machines.entries()) {
        if (i > 0) b.go();
        out.push(await b.done);
      }
      return [...out, await floor.done];
    };
    const { result, load } = await loadDuring(
      Promise.all([
        Promise.all(ms.map(runJobs)).then((o) => [o, (Date.now() - t0) / 1000]),
        TURNS ? inTurn() : Promise.all(boards.map((b) => b.done)),
      ]),
    );
    const [[outs, wallS], pressed] = result;
    const keys = pressed.slice(0, -1);
    const app = pressed.at(-1);
    if (process.env.BENCH_BOARD_TRACE)
      writeFileSync(`${process.env.BENCH_BOARD_TRACE}-${ms.length}.json`, JSON.stringify(keys));
    return { outs, wallS, keys, app, load };
  } finally {
    await Promise.all(boards.map((b) => b.kill()));
  }
}

/** The most jobs a board showed running while it was pressed. */
const mostRunning = (k) => Math.max(0, ...k.trace.filter((t) => t[2] > 0).map((t) => t[2]));

/**
 * Each board's rows against the SQLite board's (`floor`): keypress → frame,
 * p95 and median, and the board's own CPU time from a press to its frame
 * (what load moves least: the wall figures under load are mostly waiting for
 * a core).
 */
function keyRows(label, keys, floor) {
  const floorRun = `floor: SQLite, 1 machine × 8 jobs, at most ${mostRunning(floor)} running`;
  return keys.flatMap((k, i) => [
    {
      name: `${label(i)}: keypress → frame, p95 (${k.ms.length} presses while jobs ran, at most ${mostRunning(k)} running${TURNS ? '; the boards pressed in turn' : ''})`,
      value: round(quantile(k.ms, 0.95)),
      unit: 'ms',
      floor: round(quantile(floor.ms, 0.95)),
      ratio: round(quantile(k.ms, 0.95) / quantile(floor.ms, 0.95)),
      goal: `≤ 33 ms (${floorRun})`,
    },
    {
      name: `${label(i)}: keypress → frame, median`,
      value: round(median(k.ms)),
      unit: 'ms',
      floor: round(median(floor.ms)),
      ratio: round(median(k.ms) / median(floor.ms)),
      goal: 'report',
    },
    {
      name: `${label(i)}: its CPU time from a press to the frame, median / p95 (floor: SQLite's p95)`,
      value: `${round(median(k.cpu), 1)} / ${round(quantile(k.cpu, 0.95), 1)}`,
      unit: 'ms',
      floor: round(quantile(floor.cpu, 0.95), 1),
      ratio: round(quantile(k.cpu, 0.95) / quantile(floor.cpu, 0.95)),
      goal: 'report',
    },
  ]);
}

/** The floor of the keypress rows: one machine on SQLite, `ii run --jobs 8` on 8 todos, its board pressed. */
async function sqliteBoard(tmp, bare) {
  const m = machine(tmp, bare, 'solo', null);
  m.env.II_SCRIPTED_SCENARIO = scenario(tmp);
  for (let i = 0; i < 8; i++) ii(m, ['todo', 'create', '--title', `task ${i + 1}`]);
  const r = await runWithBoards([m]);
  return { ...r.keys[0], load: r.load, app: r.app };
}

/** 3 machines × ii run --jobs 8 on one backlog of 24 todos, each machine's board pressed meanwhile. */
async function machines(server, tmp, bare, floor) {
  const url = await createDatabase(server, 'ii_bench_machines');
  const ms = ['a', 'b', 'c'].map((n) => machine(tmp, bare, n, url));
  const scenarios = scenario(tmp);
  for (const m of ms) m.env.II_SCRIPTED_SCENARIO = scenarios;
  const todos = 24;
  for (let i = 0; i < todos; i++) ii(ms[0], ['todo', 'create', '--title', `task ${i + 1}`]);
  const { outs, wallS, keys, app, load } = await runWithBoards(ms);
  const rows = await query(
    url,
    "SELECT todo_id, count(*)::int AS n, count(*) FILTER (WHERE status = 'completed')::int AS done FROM jobs GROUP BY todo_id",
  );
  const hosts = await query(url, 'SELECT host, count(*)::int AS n FROM jobs GROUP BY host ORDER BY host');
  const twice = rows.filter((r) => r.n > 1).length;
  const completed = rows.reduce((s, r) => s + r.done, 0);
  const lost = outs.reduce((s, o) => s + (o.match(/taken by another runner first/g) ?? []).length, 0);
  if (rows.length !== todos) throw new Error(`${rows.length} of ${todos} todos got a job`);
  for (const [i, k] of keys.entries()) {
    if (k.ms.length < 100)
      throw new Error(`the board on ${ms[i].name} counted ${k.ms.length} presses, not ≥ 100`);
    if (k.errors.length)
      throw new Error(`the board on ${ms[i].name} could not read the store: ${k.errors[0]}`);
  }
  const f = (x) => round(x, 1);
  return [
    {
      name: `3 machines × ii run --jobs 8, ${todos} todos: todos run more than once`,
      value: twice,
      unit: 'todos',
      goal: '0',
    },
    {
      name: `… jobs completed / claims lost to another runner (resolved) / per host ${hosts.map((h) => `${h.host.replace('machine-', '')}:${h.n}`).join(' ')}`,
      value: `${completed}/${todos} · ${lost}`,
      unit: '',
      goal: 'report',
    },
    {
      name: '… wall time, all three runs (a board on each machine)',
      value: round(wallS, 1),
      unit: 's',
      goal: 'report',
    },
    ...keyRows((i) => `… machine ${ms[i].name}'s board on PostgreSQL`, keys, floor),
    {
      // What the machine's load alone does: a one-line Ink app pressed beside the boards.
      name: `… a one-line Ink app beside the boards: keypress → frame, p95 / median (${app.ms.length} presses; floor: the same beside the SQLite board)`,
      value: `${f(quantile(app.ms, 0.95))} / ${f(median(app.ms))}`,
      unit: 'ms',
      floor: `${f(quantile(floor.app.ms, 0.95))} / ${f(median(floor.app.ms))}`,
      goal: 'report',
    },
    {
      name: `… load average (1 min) during the runs, median / max; SQLite floor run: ${f(floor.load[0])} / ${f(floor.load[1])}, its board ${floor.ms.length} presses while jobs ran`,
      value: `${f(load[0])} / ${f(load[1])}`,
      unit: '',
      goal: 'report',
    },
  ];
}

/** The run's statements, from pg_stat_statements, to `file` (BENCH_PG_STATS). */
async function writeStatements(server, file) {
  const c = await adminClient(server);
  try {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const top = (order) =>
      c.query(
        `SELECT calls, round(total_exec_time::numeric, 1) AS ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 200) AS query
         FROM pg_stat_statements ORDER BY ${order} DESC LIMIT 40`,
      );
    const total = await c.query(
      'SELECT sum(calls) AS calls, round(sum(total_exec_time)::numeric) AS ms FROM pg_stat_statements',
    );
    const out = {
      total: total.rows[0],
      byCalls: (await top('calls')).rows,
      byTime: (await top('total_exec_time')).rows,
    };
    writeFileSync(file, JSON.stringify(out, null, 1));
  } finally {
    await c.end();
  }
}

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-shared-'));
  const stats = process.env.BENCH_PG_STATS;
  const server = await startPgServer({ statements: !!stats });
  try {
    const bare = sharedRepo(tmp);
    // BENCH_SHARED_ONLY=machines: the 3-machine rows alone (the boards'
    // figures); =list: the job list's alone (a check of the seeded data).
    const only = process.env.BENCH_SHARED_ONLY;
    return [
      ...(!only || only === 'list' ? await jobList(server, tmp, bare) : []),
      ...(!only ? await watchLatency(server) : []),
      ...(!only || only === 'machines'
        ? await machines(server, tmp, bare, await sqliteBoard(tmp, bare))
        : []),
    ];
  } finally {
    if (stats) await writeStatements(server, stats).catch((e) => console.error(`BENCH_PG_STATS: ${e}`));
    await server.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}
