// `ii run`'s own cost in a repository with a history: the real CLI runs
// `ii run --jobs 2` on 14 new todos with the scripted agent, once on a store
// holding 1,000 finished jobs (10,000 commits) and 1,000 done todos of the
// repository, once on an empty one (the floor), alternating, ROUNDS each.
// Reported: ii run's own CPU time (its process, sampled from /proc while it
// runs: not its runners', which are processes of their own), per job, and
// the run's wall time. ii run looks at the store after each write to it, up
// to one look per 15 ms, and runs at the person's own priority beside the
// jobs: a look that costs what the history costs is paid many times a job.
// Linux only (/proc); elsewhere its rows say so.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedJobs } from './seed-store.js';
import { median, round } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const II = join(root, 'bin', 'ii.js');
const { openStateStore, repoSlug } = await import(join(root, 'dist', 'src', 'state', 'index.js'));

const TODOS = 14;
const HISTORY = 1000;
const ROUNDS = Number(process.env.RUN_HISTORY_ROUNDS ?? 3);
/** A run that has not ended by then is stopped, and the bench fails. */
const RUN_TIMEOUT_MS = 180_000;
const TOML =
  '[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\n';

/** user + system CPU of process `pid` so far (ms), or null once it is gone; `tick`: ms per clock tick. */
function cpuMs(pid, tick) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * tick;
  } catch {
    return null;
  }
}

export async function run() {
  if (!existsSync('/proc/self/stat'))
    return [{ name: 'skipped: no /proc here', value: '', unit: '', goal: '' }];
  const tick = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-runhist-'));
  try {
    const repo = join(tmp, 'repo');
    mkdirSync(repo);
    const git = (...args) =>
      execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.com', ...args], {
        cwd: repo,
        encoding: 'utf8',
      });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'README.md'), '# bench\n');
    writeFileSync(join(repo, 'incrementum.toml'), TOML);
    git('add', '-A');
    git('commit', '-qm', 'initial');
    const slug = repoSlug(git('rev-parse', '--show-toplevel').trim());
    // Each condition's state, made once and copied for each run.
    const seeds = { empty: join(tmp, 'seed-empty'), history: join(tmp, 'seed-history') };
    mkdirSync(join(seeds.empty, 'incrementum'), { recursive: true });
    const dir = join(seeds.history, 'incrementum');
    mkdirSync(dir, { recursive: true });
    seedJobs(dir, slug, { jobs: HISTORY, finish: (j) => (j % 3 ? 'completed' : 'failed') });
    const store = openStateStore({ dir });
    try {
      // seedJobs' one todo is left open with its 333 failed jobs: done, as
      // the history's others, so both runs have the same 14 todos to run.
      for (const t of store.todos.list(slug)) store.todos.setStatus(slug, t.id, 'done');
      for (let i = 0; i < HISTORY; i++) {
        const t = store.todos.create(slug, { title: `done ${i}` });
        store.todos.setStatus(slug, t.id, 'done');
      }
    } finally {
      store.close();
    }
    const runs = { empty: [], history: [] };
    for (let round = 0; round < ROUNDS; round++)
      for (const kind of ['empty', 'history']) {
        const state = join(tmp, `state-${kind}-${round}`);
        cpSync(seeds[kind], state, { recursive: true });
        const env = { ...process.env, XDG_STATE_HOME: state, NO_COLOR: '1' };
        for (let i = 0; i < TODOS; i++) {
          const r = spawnSync(process.execPath, [II, 'todo', 'create', '--title', `todo ${i}`], {
            cwd: repo,
            env,
          });
          if (r.status !== 0) throw new Error(`ii todo create: ${r.stderr}`);
        }
        const t0 = performance.now();
        const c = spawn(process.execPath, [II, 'run', '--jobs', '2'], {
          cwd: repo,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        c.stdout.on('data', (d) => (out += d));
        c.stderr.on('data', (d) => (out += d));
        // Its last reading before it exits (a zombie's stat still reads until it is reaped).
        // Sampled every 20 ms: the same few ms at the end are missed in both runs.
        let cpu = 0;
        const sample = setInterval(() => (cpu = cpuMs(c.pid, tick) ?? cpu), 20);
        // Stopped as a person stops it (its first Ctrl-C lets the jobs end, the second abandons them).
        const stop = setTimeout(() => {
          c.kill('SIGINT');
          setTimeout(() => c.kill('SIGINT'), 2000);
        }, RUN_TIMEOUT_MS);
        const code = await new Promise((r) => c.on('close', r));
        clearTimeout(stop);
        clearInterval(sample);
        const wall = performance.now() - t0;
        if (code !== 0 || !out.includes(`ran ${TODOS} jobs: ${TODOS} completed, 0 did not`))
          throw new Error(`ii run (${kind}): exit ${code}: ${out.slice(-1500)}`);
        runs[kind].push({ cpu, wall });
        // Its workspaces go with its state: the repository forgets them for the next run.
        rmSync(state, { recursive: true, force: true });
        git('worktree', 'prune');
        for (const b of git('branch', '--format=%(refname:short)').split('\n'))
          if (b.startsWith('incrementum/')) git('branch', '-D', b);
      }
    const per = (kind, k) => median(runs[kind].map((r) => r[k])) / (k === 'cpu' ? TODOS : 1000);
    const cpuFloor = per('empty', 'cpu');
    const cpu = per('history', 'cpu');
    const wallFloor = per('empty', 'wall');
    const wall = per('history', 'wall');
    return [
      {
        name: `ii run --jobs 2, ${TODOS} todos, ${HISTORY.toLocaleString('en-US')} jobs / ${(HISTORY * 10).toLocaleString('en-US')} commits / ${HISTORY.toLocaleString('en-US')} todos of history: ii run's own CPU per job, median of ${ROUNDS} (floor: no history)`,
        value: round(cpu, 1),
        unit: 'ms',
        floor: round(cpuFloor, 1),
        ratio: round(cpu / cpuFloor),
        goal: 'report (history costs what changed, not what is held)',
      },
      {
        name: '… the run, wall time (floor: no history)',
        value: round(wall, 2),
        unit: 's',
        floor: round(wallFloor, 2),
        ratio: round(wall / wallFloor),
        goal: 'report',
      },
    ];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
