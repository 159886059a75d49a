// A flooding agent: one `ii job do` whose implement turn sends 400,000
// session/update notifications at once (the scripted agent's "flood" step:
// message chunks, thought chunks, read tool calls and their completions),
// with a dashboard (bench/flood-dashboard.child.js) showing the job live the
// whole time. Peak RSS of both processes in MB, against the same job with a
// flood of 1,000 (the floor: what a runner and a board cost at all), and the
// size of the turn's transcript against its cap ([agent] transcript-max-mb).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { round } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const distDir = join(root, 'dist');
const II = join(root, 'bin', 'ii.js');
const UPDATES = Number(process.env.II_BENCH_FLOOD ?? 400_000);
const MB = 2 ** 20;

/** A process's resident set (VmRSS) and its high-water mark (VmHWM) in MB, or null once it has exited. */
function rss(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
    const now = kb('VmRSS') / 1024;
    const peak = kb('VmHWM') / 1024;
    // A process that has exited but not been reaped has no memory figures.
    return Number.isFinite(now) && Number.isFinite(peak) ? { now, peak } : null;
  } catch {
    return null;
  }
}

/** Every file under `dir` whose name ends in .jsonl, with its size. */
function jsonlFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile() && e.name.endsWith('.jsonl') && e.name !== 'events.jsonl') {
      const p = join(e.parentPath, e.name);
      out.push({ path: p, size: statSync(p).size });
    }
  return out;
}

async function floodJob(count, view = 'live') {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-flood-'));
  try {
    const repo = join(tmp, 'repo');
    mkdirSync(repo);
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
      II_SCRIPTED_SCENARIO: join(tmp, 'flood.json'),
    };
    writeFileSync(
      join(repo, 'incrementum.toml'),
      '[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["true"]\nauto-commit = false\nbaseline-tests = false\n',
    );
    writeFileSync(join(repo, 'README.md'), '# r\n');
    const git = (...a) => execFileSync('git', a, { cwd: repo, env, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-qm', 'init');
    writeFileSync(
      env.II_SCRIPTED_SCENARIO,
      JSON.stringify({
        implement: [
          {
            actions: [
              { type: 'flood', count, update: 'mixed' },
              // The agent stays in its turn a moment: the floor's 1,000 updates
              // are over in milliseconds, and a board that first looks after
              // the job ended shows no live pane (only a running job has one).
              { type: 'delay', ms: 1000 },
              { type: 'write', path: 'a.txt', content: 'a\n' },
            ],
          },
        ],
      }),
    );
    const stateDir = join(tmp, 'state', 'incrementum');
    mkdirSync(stateDir, { recursive: true });

    const dash = spawn(
      process.execPath,
      [join(root, 'bench', 'flood-dashboard.child.js'), distDir, stateDir, view],
      {
        env,
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    let dashOut = '';
    dash.stdout.on('data', (d) => (dashOut += d));
    const dashExit = new Promise((r) => dash.on('close', r));
    while (!dashOut.includes('ready\n')) {
      if (dash.exitCode !== null) throw new Error('the dashboard child exited before it was ready');
      await new Promise((r) => setTimeout(r, 20));
    }

    const runner = spawn(process.execPath, [II, 'job', 'do', '--title', 'flood'], {
      cwd: repo,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    runner.stderr.on('data', (d) => (err += d));
    const runnerExit = new Promise((r) => runner.on('close', r));
    let runnerPeak = 0;
    let dashPeak = 0;
    let exited = false;
    void runnerExit.then(() => (exited = true));
    while (!exited) {
      const r = rss(runner.pid);
      if (r) runnerPeak = Math.max(runnerPeak, r.peak);
      const d = rss(dash.pid);
      if (d) dashPeak = Math.max(dashPeak, d.now);
      await new Promise((r) => setTimeout(r, 50));
    }
    const code = await runnerExit;
    // The board catches up with the end of the transcript, then reports.
    await new Promise((r) => setTimeout(r, 1500));
    dash.stdin.end();
    await dashExit;
    const report = JSON.parse(dashOut.trim().split('\n').at(-1));
    if (code !== 0 || !/completed/.test(err))
      throw new Error(`the flood job did not complete (exit ${code}):\n${err}`);
    if (!report.live)
      throw new Error(`the dashboard never showed the flood of ${count} in the job's live pane (${view})`);
    const transcripts = jsonlFiles(join(stateDir, 'jobs'));
    const implement = transcripts.sort((a, b) => b.size - a.size)[0];
    return {
      runner: runnerPeak,
      dashboard: Math.max(dashPeak, report.peak),
      transcriptMb: (implement?.size ?? 0) / MB,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export async function run() {
  const floor = await floodJob(1000);
  const flood = await floodJob(UPDATES);
  const withLog = await floodJob(UPDATES, 'log');
  const n = UPDATES.toLocaleString('en');
  return [
    {
      name: `runner peak RSS, ${n} updates in one turn`,
      value: round(flood.runner, 1),
      unit: 'MB',
      floor: round(floor.runner, 1),
      ratio: round(flood.runner / floor.runner),
      goal: '<= 150 MB',
    },
    {
      name: `dashboard peak RSS, showing that job live`,
      value: round(flood.dashboard, 1),
      unit: 'MB',
      floor: round(floor.dashboard, 1),
      ratio: round(flood.dashboard / floor.dashboard),
      goal: '<= 150 MB',
    },
    {
      name: `dashboard peak RSS, with that job's log (l) open`,
      value: round(withLog.dashboard, 1),
      unit: 'MB',
      floor: round(floor.dashboard, 1),
      ratio: round(withLog.dashboard / floor.dashboard),
      goal: '<= 150 MB',
    },
    {
      name: "the turn's transcript",
      value: round(flood.transcriptMb, 1),
      unit: 'MB',
      goal: '<= 32 MB ([agent] transcript-max-mb)',
    },
  ];
}
