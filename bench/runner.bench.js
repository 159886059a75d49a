// The runner's own overhead per iteration: real jobs (the real launch, git
// worktrees, GitVcs, the SQLite store, the event log, the scripted ACP agent
// as a real child process, the test commands through a shell) run in this
// process, with the time spent inside agent sessions and inside test commands
// taken out. An iteration runs from entering `implementing` to entering it
// again (or the job's end). What is left is the runner's bookkeeping: git
// commands, store writes, snapshots, templates, protocol files, events.
//
// Agent time is each session from startAgent() to close() resolving: the
// agent's boot and handshake are the agent's cost (a real agent takes seconds),
// so they are shown apart, against `node -e 0` (the scripted agent is a node
// process). The overhead's floor is one `git commit` spawn: the least an
// iteration that records a commit could cost.
import childProcess, { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, quantile, round, sample } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(join(root, 'dist', 'src', p));
const { repoSlug } = await dist('state/index.js');
const { openAsyncStateStore } = await dist('state/open-async.js');
const { loadConfig } = await dist('job/config.js');
const { launchJob } = await dist('job/launch.js');
const { realJobDeps } = await dist('cli/job/wiring.js');

const now = () => Number(process.hrtime.bigint()) / 1e6;
/** This process's CPU time (user + system), ms: the runner's own work, its children's (git, agent) not counted. */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const write = (path, content) => ({ type: 'write', path, content });
const verdict = (v, text = '') => ({ actions: [{ type: 'feedback', verdict: v, text }] });

/**
 * One job, five iterations of every kind: the review requests changes; the
 * tests fail; accepted and committed (change 1); two files, accepted and
 * committed (change 2); one more change (3). Then the empty implement pass
 * and the project review end the job.
 */
const SCENARIO = {
  implement: [
    { actions: [write('a.txt', 'a\n')] },
    { actions: [write('a.txt', 'a, better\n'), write('FAIL', 'x\n')] },
    { actions: [{ type: 'delete', path: 'FAIL' }, write('a.txt', 'a, best\n')] },
    { actions: [write('b.txt', 'b\n'), write('src/c.txt', 'c\n')] },
    { actions: [write('b.txt', 'b, documented\n')] },
  ],
  review: [
    verdict('REQUEST_CHANGES', 'Not yet.\n\nMake a.txt better.'),
    verdict('ACCEPT'),
    verdict('ACCEPT'),
  ],
  'commit-message': [{ actions: [{ type: 'commit_message', text: 'feat: a' }] }],
};
const ITERATIONS = 5;
/** The warm-up job (JIT, page cache, the first worktree): one iteration, then the end. */
const WARM_UP = { implement: [{ actions: [write('w.txt', 'w\n')] }] };

/**
 * Notes when this process starts a git process, through the very `spawn`
 * src/vcs/git-run.ts calls (ESM named imports of a builtin follow
 * syncBuiltinESMExports). The count per iteration does not move with the
 * machine's load, so it shows progress where the milliseconds are noisy.
 */
function watchGitSpawns() {
  const original = childProcess.spawn;
  const times = [];
  const argvs = [];
  childProcess.spawn = function (cmd, ...rest) {
    if (cmd === 'git') {
      times.push(now());
      argvs.push(rest[0]);
    }
    return original.call(this, cmd, ...rest);
  };
  syncBuiltinESMExports();
  return {
    times,
    argvs,
    restore() {
      childProcess.spawn = original;
      syncBuiltinESMExports();
    },
  };
}

function gitIn(cwd, ...args) {
  return execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=b@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

function makeRepo(tmp) {
  const repo = join(tmp, 'repo');
  mkdirSync(repo);
  gitIn(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# bench\n');
  writeFileSync(
    join(repo, 'incrementum.toml'),
    '[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f README.md", "test ! -e FAIL"]\nauto-commit = false\n',
  );
  gitIn(repo, 'add', '-A');
  gitIn(repo, 'commit', '-qm', 'base');
  return repo;
}

/** Runs one job through the real wiring and returns its iterations' timings. */
async function timedJob(ctx, n, script = SCENARIO, iterations = ITERATIONS) {
  const scenario = join(ctx.tmp, `scenario-${n}.json`);
  writeFileSync(scenario, JSON.stringify(script));
  const real = realJobDeps();
  const agentSpans = [];
  const testSpans = [];
  const vcsSpans = [];
  // Agent time: from asking for a session to its close() resolving.
  const startAgent = async (opts) => {
    const t0 = now();
    const cpu0 = cpu();
    const s = await real.startAgent(opts);
    const started = now();
    const close = s.close.bind(s);
    s.close = async () => {
      const c0 = now();
      try {
        await close();
      } finally {
        agentSpans.push({ t0, t1: now(), cpu: cpu() - cpu0, lifecycle: started - t0 + (now() - c0) });
      }
    };
    return s;
  };
  // Time inside the Vcs, to show how much of the overhead is git.
  const vcs = new Proxy(real.vcs, {
    get(target, key) {
      const v = target[key];
      if (typeof v !== 'function') return v;
      return async (...args) => {
        const t0 = now();
        try {
          return await v.apply(target, args);
        } finally {
          vcsSpans.push({ t0, t1: now(), name: String(key) });
        }
      };
    },
  });
  const deps = {
    ...real,
    vcs,
    startAgent,
    resolveAgent: (config, o) => {
      const a = real.resolveAgent(config, o);
      return { ...a, env: { ...a.env, II_SCRIPTED_SCENARIO: scenario } };
    },
  };
  const bounds = [];
  const boundsCpu = [];
  let testStart = 0;
  let testCpu = 0;
  const todo = await ctx.store.todos.create(ctx.slug, { title: `bench job ${n}` });
  const { runner } = await launchJob(deps, {
    store: ctx.store,
    stateDir: ctx.store.dir,
    repo: { root: ctx.repo, slug: ctx.slug },
    config: ctx.config,
    todo,
    onEvent: (e) => {
      if (e.type === 'stage' && e.to === 'implementing') {
        bounds.push(now());
        boundsCpu.push(cpu());
      } else if (e.type === 'test_start') {
        testStart = now();
        testCpu = cpu();
      } else if (e.type === 'test_end') testSpans.push({ t0: testStart, t1: now(), cpu: cpu() - testCpu });
    },
  });
  const job = await runner.run();
  const finished = now();
  if (job.status !== 'completed') throw new Error(`bench job ${job.id} ${job.status}: ${job.failure_reason}`);
  bounds.push(finished);
  boundsCpu.push(cpu());
  // Each iteration, the closing segment (empty pass, project review), the end.
  if (bounds.length !== iterations + 2)
    throw new Error(`expected ${iterations} iterations, saw ${bounds.length - 2}`);
  const count = (times, a, b) => times.filter((t) => t >= a && t <= b).length;
  const within = (spans, a, b) =>
    spans.filter((s) => s.t0 >= a && s.t1 <= b).reduce((sum, s) => sum + (s.t1 - s.t0), 0);
  const out = [];
  // The last segment is the empty pass, the project review and the job's end:
  // not an iteration, and the release of the workspace is per job.
  for (let i = 0; i < iterations; i++) {
    const [a, b] = [bounds[i], bounds[i + 1]];
    const agent = within(agentSpans, a, b);
    // RUNNER_BENCH_TRACE=1: each iteration's git commands, to see which are spent where.
    if (process.env.RUNNER_BENCH_TRACE && n === 1) {
      const { times, argvs } = ctx.gitSpawns;
      const mine = times.flatMap((t, k) => (t >= a && t <= b ? [argvs[k]] : []));
      process.stderr.write(`iteration ${i + 1}: ${mine.length} git\n`);
      for (const args of mine) {
        const plain = args.filter(
          (x) => !/^(-c|core\.quotepath=off|--no-pager|--git-dir=.*|--work-tree=.*)$/.test(x),
        );
        process.stderr.write(`  git ${plain.join(' ').slice(0, 160)}\n`);
      }
      for (const s of vcsSpans.filter((s) => s.t0 >= a && s.t1 <= b))
        process.stderr.write(`  vcs.${s.name} ${(s.t1 - s.t0).toFixed(1)} ms\n`);
    }
    const tests = within(testSpans, a, b);
    // RUNNER_BENCH_WINDOWS=file: the overhead's spans (the iteration less its
    // agent and test spans), monotonic ms, to cut a --cpu-prof down to them.
    if (process.env.RUNNER_BENCH_WINDOWS) {
      const cuts = [...agentSpans, ...testSpans]
        .filter((s) => s.t0 < b && s.t1 > a)
        .sort((x, y) => x.t0 - y.t0);
      let at = a;
      for (const c of cuts) {
        if (c.t0 > at) ctx.windows.push([at, c.t0]);
        at = Math.max(at, c.t1);
      }
      if (at < b) ctx.windows.push([at, b]);
    }
    out.push({
      overhead: b - a - agent - tests,
      // The same cut on this process's CPU time: load moves it far less than the wall clock.
      cpu:
        boundsCpu[i + 1] -
        boundsCpu[i] -
        [...agentSpans, ...testSpans]
          .filter((s) => s.t0 >= a && s.t1 <= b)
          .reduce((sum, s) => sum + s.cpu, 0),
      vcs: within(vcsSpans, a, b),
      gits: count(ctx.gitSpawns.times, a, b),
    });
  }
  return { iterations: out, lifecycles: agentSpans.map((s) => s.lifecycle) };
}

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-runner-'));
  let store = null;
  const gitSpawns = watchGitSpawns();
  try {
    const repo = makeRepo(tmp);
    const home = join(tmp, 'home');
    // The runner takes the asynchronous store; SQLite behind it (url: null), whatever II_DATABASE_URL says.
    store = await openAsyncStateStore({ dir: join(tmp, 'state', 'incrementum'), url: null });
    const ctx = {
      tmp,
      repo,
      slug: repoSlug(repo),
      // The user's own ~/.config/incrementum must not change what is measured.
      config: loadConfig(repo, { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config') }),
      store,
      gitSpawns,
      windows: [],
    };
    const floorRepo = join(tmp, 'floor');
    mkdirSync(floorRepo);
    gitIn(floorRepo, 'init', '-q');
    const gitCommit = () => {
      const r = spawnSync(
        'git',
        ['-c', 'user.name=b', '-c', 'user.email=b@example.com', 'commit', '-q', '--allow-empty', '-m', 'x'],
        { cwd: floorRepo },
      );
      if (r.status !== 0) throw new Error(`git commit failed: ${r.stderr}`);
    };
    const nodeStart = () => spawnSync(process.execPath, ['-e', '0']);

    await timedJob(ctx, 0, WARM_UP, 1);
    const overhead = [];
    const ownCpu = [];
    const vcs = [];
    const gits = [];
    const lifecycle = [];
    const commitFloor = [];
    const nodeFloor = [];
    // Interleave the floors with the jobs so both see the same machine load.
    for (let n = 1; n <= 4; n++) {
      const r = await timedJob(ctx, n);
      overhead.push(...r.iterations.map((i) => i.overhead));
      ownCpu.push(...r.iterations.map((i) => i.cpu));
      vcs.push(...r.iterations.map((i) => i.vcs));
      gits.push(...r.iterations.map((i) => i.gits));
      lifecycle.push(...r.lifecycles);
      commitFloor.push(...(await sample(3, gitCommit)));
      nodeFloor.push(...(await sample(3, nodeStart)));
    }
    if (process.env.RUNNER_BENCH_WINDOWS)
      writeFileSync(process.env.RUNNER_BENCH_WINDOWS, JSON.stringify(ctx.windows));
    const floor = median(commitFloor);
    const nf = median(nodeFloor);
    const row = (name, value, f, goal) => ({
      name,
      value: round(value),
      unit: 'ms',
      floor: round(f),
      ratio: round(value / f),
      goal,
    });
    return [
      row(
        `runner overhead per iteration, median (${overhead.length} iterations)`,
        median(overhead),
        floor,
        '≤ 4×',
      ),
      row('runner overhead per iteration, p95', quantile(overhead, 0.95), floor, '≤ 150 ms'),
      row('  of which inside the Vcs (git), median', median(vcs), floor, 'report'),
      row(
        "  the runner's own CPU time (user+sys, git's not counted), median",
        median(ownCpu),
        floor,
        'report',
      ),
      {
        name: `  git processes per iteration, median (max ${Math.max(...gits)})`,
        value: median(gits),
        unit: '',
        goal: '≤ 5',
      },
      row('agent session start + close (scripted agent), median', median(lifecycle), nf, 'report'),
    ];
  } finally {
    gitSpawns.restore();
    await store?.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
