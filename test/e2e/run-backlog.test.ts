// ii run end to end: the built CLI starting detached job runners (ii job do
// --backlog) on the scripted agent in a real git repository. What is checked
// comes from the job records: which todo ran when, and how many at once.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { II, ii, type RunResult } from '../helpers/cli.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { isRunning, runningIn, runningWith } from '../helpers/procs.js';
import { testEnv } from '../helpers/env.js';

interface JobRec {
  id: string;
  todo_id: string;
  status: string;
  started_at: string;
  completed_at: string | null;
  failure_reason: string | null;
  pid: number | null;
}

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;

function setup(config: string) {
  repo = join(tmp.path, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  gitRepo(repo, { 'README.md': '# r\n', 'incrementum.toml': config });
}
const CONFIG = `[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\n`;

const run = (args: string[]) => ii(args, { cwd: repo, env });
const create = (title: string, ...more: string[]) =>
  run(['todo', 'create', '--title', title, ...more]).stdout.trim();
const jobs = (): JobRec[] => JSON.parse(run(['job', 'list', '--all', '--json']).stdout) as JobRec[];

/** `ii run` in the background, to be killed: its pid. */
function iiRunDetachedPid(args: string[], extraEnv: NodeJS.ProcessEnv): number {
  const c = spawn(process.execPath, [II, ...args], {
    cwd: repo,
    env: { ...process.env, NO_COLOR: '1', ...env, ...extraEnv },
    stdio: 'ignore',
  });
  c.on('error', () => {});
  return c.pid!;
}

/** ii in the background, with no time limit (a loaded machine runs jobs slowly); resolves when it exits. */
function iiAsync(args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [II, ...args], {
      cwd: repo,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Live standby runners (ii job do --standby) working in this test's repository. */
const standbys = () => runningWith('--standby').filter((p) => runningIn(repo).includes(p));
const runLogs = () => join(tmp.path, 'state', 'incrementum', 'runs', repoSlug(repo));

/** `ii job do --backlog --standby` with its stdin ours: the hand-over by hand. */
function standbyRunner() {
  const c = spawn(process.execPath, [II, 'job', 'do', '--backlog', '--standby', '--no-edit'], {
    cwd: repo,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((res) => c.on('exit', res));
  return { c, exited, stderr: () => stderr };
}

/** The most job records whose [start, end) overlap at one moment. */
function mostAtOnce(list: JobRec[]): number {
  let most = 0;
  for (const j of list) {
    const at = j.started_at;
    const n = list.filter(
      (k) => k.started_at <= at && (k.completed_at === null || k.completed_at > at),
    ).length;
    most = Math.max(most, n);
  }
  return most;
}

beforeEach(() => {
  tmp = tempDir('ii-run-');
  env = testEnv(tmp.path);
});
afterEach(() => tmp.cleanup());

describe('ii run', () => {
  it("--watch takes a slot change from the store while it runs (what the board's + and - do), and leaves no record when stopped", async () => {
    setup(CONFIG);
    const ids = ['A', 'B', 'C', 'D', 'E'].map((t) => create(t));
    const scenarios = join(tmp.path, 'scenarios');
    execFileSync('mkdir', ['-p', scenarios]);
    writeFileSync(
      join(scenarios, 'default.json'),
      JSON.stringify({
        implement: [
          {
            actions: [
              { type: 'write', path: 'x.txt', content: 'x\n' },
              { type: 'delay', ms: 1500 },
            ],
          },
          { actions: [] },
        ],
      }),
    );
    env = { ...env, II_SCRIPTED_SCENARIO: scenarios };
    const c = spawn(process.execPath, [II, 'run', '--watch', '--jobs', '1'], {
      cwd: repo,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((res) => c.on('exit', res));
    const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
    try {
      const slug = repoSlug(repo);
      const runner = await waitFor(() => store.runners.list(slug)[0], 'ii run to record itself');
      expect(runner).toMatchObject({ pid: c.pid, slots: 1, watch: true });
      // One slot: the first job ends before another starts.
      await waitFor(() => (jobs().length >= 2 ? true : null), 'a second job', 120_000);
      const changedAt = new Date().toISOString();
      store.runners.setSlots(runner.id, 3);
      await waitFor(
        () => stderr.includes('slots: 3 (changed from the dashboard)') || null,
        'the run to see it',
      );
      await waitFor(
        () => (jobs().filter((j) => j.status === 'completed').length === 5 ? true : null),
        'every todo done',
        180_000,
      );
      const list = jobs();
      expect(new Set(list.map((j) => j.todo_id))).toEqual(new Set(ids));
      const before = list.filter((j) => j.started_at < changedAt);
      expect(mostAtOnce(before)).toBe(1);
      expect(mostAtOnce(list)).toBeGreaterThanOrEqual(2);
      expect(mostAtOnce(list)).toBeLessThanOrEqual(3);
      // Stopped as the board's R stops it: no new jobs, then it ends and forgets itself.
      c.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(store.runners.list(slug)).toEqual([]);
      // Each job committed x.txt: the run says how to land them.
      expect(stderr).toContain(
        'land them (rebased onto the branch as it is now, tested there): ii job land <job>',
      );
    } finally {
      if (c.exitCode === null) c.kill('SIGKILL');
      store.close();
    }
  }, 300_000);

  it('--jobs 2 on 5 todos with deps: every todo done, deps first, never more than 2 at once', async () => {
    setup(CONFIG);
    const a = create('A');
    const b = create('B', '--deps', a);
    const c = create('C', '--priority', '0');
    const d = create('D', '--deps', `${b},${c}`);
    const e = create('E', '--priority', '4');
    const r = await iiAsync(['run', '--jobs', '2']);
    expect(r.stderr).toContain('ran 5 jobs: 5 completed, 0 did not');
    // Their agent changed nothing: no commits, so nothing to land and no hint to.
    expect(r.stderr).not.toContain('land them');
    expect(r.code).toBe(0);
    const list = jobs();
    expect(list.map((j) => j.status)).toEqual(Array(5).fill('completed'));
    const byTodo = new Map(list.map((j) => [j.todo_id, j]));
    expect([...byTodo.keys()].sort()).toEqual([a, b, c, d, e].sort());
    const after = (todo: string, dep: string) =>
      expect(byTodo.get(todo)!.started_at >= byTodo.get(dep)!.completed_at!).toBe(true);
    after(b, a);
    after(d, b);
    after(d, c);
    // Run order: C (P0) and A start first; E (P4) is the last ready one.
    const order = [...list].sort((x, y) => (x.started_at < y.started_at ? -1 : 1)).map((j) => j.todo_id);
    expect(new Set(order.slice(0, 2))).toEqual(new Set([c, a]));
    expect(mostAtOnce(list)).toBeLessThanOrEqual(2);
    expect(mostAtOnce(list)).toBe(2);
    expect(JSON.parse(run(['todo', 'list', '--status', 'done', '--json']).stdout)).toHaveLength(5);
    // The backlog empty, no standby is left waiting, nor its log.
    await waitFor(() => standbys().length === 0 || null, 'no standby left', 30_000, 100);
    expect(readdirSync(runLogs()).filter((f) => f.includes('standby'))).toEqual([]);
  }, 240_000);

  it('--land: each completed job lands on main in completion order, rebased and tested on the tip it lands on', async () => {
    setup(CONFIG);
    const scenario = join(tmp.path, 'land.json');
    // One job at a time takes the next implement turns: each writes its own
    // file, then (asked for the next change) changes nothing and is done.
    writeFileSync(
      scenario,
      JSON.stringify({
        implement: ['a', 'b', 'c'].flatMap((n) => [
          { actions: [{ type: 'write', path: `${n}.txt`, content: `${n}\n` }] },
          { actions: [] },
        ]),
      }),
    );
    env = { ...env, II_SCRIPTED_SCENARIO: scenario };
    for (const t of ['A', 'B', 'C']) create(t);
    const r = await iiAsync(['run', '--jobs', '1', '--land']);
    expect(r.stderr).toContain('landed 3 jobs');
    expect(r.code, r.stderr).toBe(0);
    // The first job's runner starts cold; the next two were waiting on standby.
    expect(r.stderr.match(/^started .*\(runner pid/gm)).toHaveLength(1);
    expect(r.stderr.match(/^started .*\(standby runner pid/gm)).toHaveLength(2);
    // None left waiting, nor its log.
    expect(standbys()).toEqual([]);
    expect(readdirSync(runLogs()).filter((f) => f.includes('standby'))).toEqual([]);
    const list = JSON.parse(run(['job', 'list', '--all', '--json']).stdout) as (JobRec & {
      landed: { onto: string; commit: string; tested: boolean } | null;
    })[];
    expect(list.map((j) => j.landed?.onto)).toEqual(['main', 'main', 'main']);
    expect(list.every((j) => j.landed?.tested)).toBe(true);
    const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' }).trim();
    // Linear: three commits on the initial one, each job's landed commit among them, the newest the tip.
    const mainLog = git('rev-list', '--first-parent', 'main').split('\n');
    expect(mainLog).toHaveLength(4);
    expect(git('rev-list', '--merges', 'main')).toBe('');
    for (const j of list) expect(mainLog).toContain(j.landed!.commit);
    // The checkout has main checked out: fast-forwarded each time.
    expect(git('ls-files').split('\n').sort()).toEqual([
      'README.md',
      'a.txt',
      'b.txt',
      'c.txt',
      'incrementum.toml',
    ]);
    expect(git('status', '--porcelain')).toBe('');
  }, 240_000);

  it("--land: a todo starts only once its dep landed, from a branch that has the dep's commits", async () => {
    setup(CONFIG);
    const a = create('A');
    const b = create('B', '--deps', a);
    const c = create('C');
    const scenarios = join(tmp.path, 'scenarios');
    execFileSync('mkdir', ['-p', scenarios]);
    for (const [id, n] of [
      [a, 'a'],
      [b, 'b'],
      [c, 'c'],
    ] as const)
      writeFileSync(
        join(scenarios, `${id}.json`),
        JSON.stringify({
          implement: [{ actions: [{ type: 'write', path: `${n}.txt`, content: `${n}\n` }] }, { actions: [] }],
        }),
      );
    env = { ...env, II_SCRIPTED_SCENARIO: scenarios };
    const r = await iiAsync(['run', '--jobs', '2', '--land']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('landed 3 jobs');
    const list = JSON.parse(run(['job', 'list', '--all', '--json']).stdout) as (JobRec & {
      base_rev: string;
      landed: { commit: string; at: string } | null;
    })[];
    const byTodo = new Map(list.map((j) => [j.todo_id, j]));
    const ja = byTodo.get(a)!;
    const jb = byTodo.get(b)!;
    // B waited for A's landing, not only its completion, and started from it.
    expect(jb.started_at >= ja.landed!.at, `${jb.started_at} < ${ja.landed!.at}`).toBe(true);
    const isAncestor = (x: string, y: string) => {
      try {
        execFileSync('git', ['merge-base', '--is-ancestor', x, y], { cwd: repo });
        return true;
      } catch {
        return false;
      }
    };
    expect(isAncestor(ja.landed!.commit, jb.base_rev)).toBe(true);
    // And the run says so in that order: A landed, then B started.
    const saidLanded = r.stderr.indexOf(`job ${ja.id} landed on main`);
    const saidStarted = r.stderr.indexOf(`started ${b} B`);
    expect(saidLanded).toBeGreaterThan(-1);
    expect(saidStarted).toBeGreaterThan(saidLanded);
  }, 240_000);

  it('--land --jobs 3 on 6 independent todos: all 6 on main, linear, each landed commit tested as it landed', async () => {
    // Every tree a test command runs on says so: the job's own iterations,
    // and each landing's rebased tip.
    // The log is outside the workspace: the sandbox lets the tests write there only because it says so.
    const tested = join(tmp.path, 'log', 'tested.log');
    mkdirSync(dirname(tested));
    setup(
      `[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["git rev-parse HEAD >> '${tested}'"]\nauto-commit = false\n` +
        `\n[sandbox]\nwritable = ["${dirname(tested)}"]\n`,
    );
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const ids = names.map((n) => create(n.toUpperCase()));
    // A scenario folder: each todo plays its own file with its own place, so
    // three jobs at once never take each other's turns.
    const scenarios = join(tmp.path, 'scenarios');
    execFileSync('mkdir', ['-p', scenarios]);
    names.forEach((n, k) =>
      writeFileSync(
        join(scenarios, `${ids[k]}.json`),
        JSON.stringify({
          implement: [
            {
              actions: [
                { type: 'write', path: `${n}.txt`, content: `${n}\n` },
                { type: 'delay', ms: 200 },
              ],
            },
            { actions: [] },
          ],
        }),
      ),
    );
    env = { ...env, II_SCRIPTED_SCENARIO: scenarios };
    const r = await iiAsync(['run', '--jobs', '3', '--land']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('landed 6 jobs');
    // Without a terminal the total comes as plain lines, each saying something new.
    const totals = r.stderr.split('\n').filter((l) => l.startsWith('run: '));
    expect(totals.length).toBeGreaterThan(1);
    expect(totals.filter((t, k) => t === totals[k - 1])).toEqual([]);
    const list = JSON.parse(run(['job', 'list', '--all', '--json']).stdout) as (JobRec & {
      landed: { onto: string; commit: string; at: string; tested: boolean } | null;
    })[];
    expect(list).toHaveLength(6);
    expect(new Set(list.map((j) => j.todo_id))).toEqual(new Set(ids));
    expect(list.every((j) => j.landed?.onto === 'main' && j.landed.tested)).toBe(true);
    expect(mostAtOnce(list)).toBeGreaterThanOrEqual(2);
    expect(mostAtOnce(list)).toBeLessThanOrEqual(3);
    const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' }).trim();
    // Linear: six commits on the initial one, no merges, in landing order,
    // each landed commit the child of the one landed before it.
    const mainLog = git('rev-list', '--reverse', 'main').split('\n');
    expect(mainLog).toHaveLength(7);
    expect(git('rev-list', '--merges', 'main')).toBe('');
    const byLanding = [...list].sort((x, y) => (x.landed!.at < y.landed!.at ? -1 : 1));
    expect(byLanding.map((j) => j.landed!.commit)).toEqual(mainLog.slice(1));
    // Tested on the tip it landed on: the landed commit (the rebase onto the
    // previous landing) is a tree a test command ran on.
    const testedHeads = new Set(execFileSync('cat', [tested], { encoding: 'utf8' }).trim().split('\n'));
    for (const j of byLanding) expect(testedHeads.has(j.landed!.commit), j.id).toBe(true);
    expect(git('ls-files').split('\n').sort()).toEqual([
      'README.md',
      ...names.map((n) => `${n}.txt`),
      'incrementum.toml',
    ]);
    expect(git('status', '--porcelain')).toBe('');
  }, 300_000);

  it('a todo whose jobs fail stops after [run] max-attempts, says why, and exits 1', async () => {
    // The baseline run of the tests fails on the untouched base: every job fails.
    setup(CONFIG.replace('test -f README.md', 'false'));
    const t = create('Broken');
    const r = await iiAsync(['run']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ran 2 jobs: 0 completed, 2 did not');
    const list = jobs();
    // Each failure says why as it happens, not only in ii job show.
    for (const j of list)
      expect(r.stderr).toMatch(new RegExp(`job ${j.id} failed: the tests fail before any change`));
    expect(list.map((j) => [j.todo_id, j.status])).toEqual([
      [t, 'failed'],
      [t, 'failed'],
    ]);
    expect(run(['todo', 'list']).stdout).toContain(
      `${t}  its jobs failed 2 times; ii todo reopen to try again`,
    );
    // Nothing ready: a second run starts nothing.
    const again = await iiAsync(['run']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('nothing to run');
    expect(jobs()).toHaveLength(2);
  }, 180_000);

  it("a job whose agent crashed: ii run's line says what the agent said, not only the line introducing it", async () => {
    setup(CONFIG);
    const scenario = join(tmp.path, 'crash.json');
    writeFileSync(scenario, JSON.stringify({ implement: [{ actions: [{ type: 'crash', code: 7 }] }] }));
    env.II_SCRIPTED_SCENARIO = scenario;
    create('Crash');
    const r = await iiAsync(['run', '--max-jobs', '1']);
    expect(r.code).toBe(1);
    const [job] = jobs();
    // The reason's first line only introduces the agent's words, on the next line.
    expect(job!.failure_reason).toMatch(/its last output on stderr:\nscripted agent: crashing on purpose/);
    expect(r.stderr).toMatch(
      new RegExp(
        `job ${job!.id} failed: .*exited with code 7.*; its last output on stderr: scripted agent: crashing on purpose \\(exit 7\\) \\(ii job show ${job!.id}\\)`,
      ),
    );
  }, 180_000);

  it('--help tells what it does; the runner flag ii run passes to ii job do is not in its help', () => {
    setup(CONFIG);
    const h = run(['run', '--help']).stdout;
    for (const flag of ['--jobs <N>', '--agent', '--watch', '--max-jobs <M>']) expect(h).toContain(flag);
    expect(h).toContain('a second Ctrl-C abandons them');
    const doHelp = run(['job', 'do', '--help']).stdout;
    for (const flag of ['--backlog', '--standby', '--back']) expect(doHelp).not.toContain(flag);
    expect(run(['--help']).stdout).toMatch(/\n\s+run \[options\]/);
  });

  it('two ii run at once on one backlog run each todo exactly once', async () => {
    setup(CONFIG);
    const ids = ['A', 'B', 'C', 'D', 'E', 'F'].map((t) => create(t));
    const [r1, r2] = await Promise.all([iiAsync(['run', '--jobs', '2']), iiAsync(['run', '--jobs', '2'])]);
    expect([r1.code, r2.code]).toEqual([0, 0]);
    // Neither started a runner for a todo the other was starting (each would
    // be a process that loses the claim).
    expect(r1.stderr + r2.stderr).not.toContain('taken by another runner first');
    const list = jobs();
    expect(list.map((j) => j.todo_id).sort()).toEqual([...ids].sort());
    expect(list.every((j) => j.status === 'completed')).toBe(true);
    // Each counted the other's jobs against its slots: at most 2 of the repository's at once.
    expect(mostAtOnce(list)).toBeLessThanOrEqual(2);
  }, 240_000);

  it('SIGKILL of ii run ends its standby runner at once, leaving no process; the running job goes on to its end', async () => {
    setup(CONFIG);
    for (const t of ['A', 'B', 'C']) create(t);
    const scenario = join(tmp.path, 'slow.json');
    writeFileSync(
      scenario,
      JSON.stringify({ implement: Array(4).fill({ actions: [{ type: 'delay', ms: 1500 }] }) }),
    );
    const pid = iiRunDetachedPid(['run', '--jobs', '1'], { II_SCRIPTED_SCENARIO: scenario });
    // One job runs, and the runner for the next waits on standby.
    await waitFor(
      () => jobs().filter((j) => j.status === 'active').length === 1,
      'a job running',
      120_000,
      300,
    );
    const [standby] = await waitFor(
      () => (standbys().length === 1 ? standbys() : null),
      'a standby',
      60_000,
      200,
    );
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !isRunning(standby!), 'the standby to end', 30_000, 100);
    await waitFor(() => jobs()[0]!.status === 'completed' || null, 'the running job to end', 120_000, 300);
    // Nothing of the killed run works in the repository any more, and it started no second job.
    await waitFor(() => runningIn(repo).length === 0, 'no process left', 30_000, 200);
    expect(jobs()).toHaveLength(1);
  }, 240_000);

  it.each(['SIGKILL', 'SIGINT'] as const)(
    '--jobs 2 keeps two standby runners while todos wait for a slot; %s of ii run ends both, leaving no process',
    async (signal) => {
      setup(CONFIG);
      for (const t of ['A', 'B', 'C', 'D', 'E']) create(t);
      const scenario = join(tmp.path, 'slow.json');
      writeFileSync(
        scenario,
        JSON.stringify({ implement: Array(10).fill({ actions: [{ type: 'delay', ms: 1500 }] }) }),
      );
      const pid = iiRunDetachedPid(['run', '--jobs', '2'], { II_SCRIPTED_SCENARIO: scenario });
      // Two jobs run, and two runners wait for the next two todos: two jobs
      // ending within one standby's start both find one ready.
      await waitFor(
        () => jobs().filter((j) => j.status === 'active').length === 2,
        'two jobs running',
        120_000,
        300,
      );
      // A standby handed a todo keeps its command line, but its log (its
      // stdout) is renamed after the todo then: waiting, it is still the standby's.
      const idle = () =>
        standbys().filter((p) => {
          try {
            return readlinkSync(`/proc/${p}/fd/1`).includes('-standby-');
          } catch {
            return false;
          }
        });
      const waiting = await waitFor(
        () => {
          const now = idle();
          return now.length === 2 ? now : null;
        },
        'two standbys',
        60_000,
        200,
      );
      // SIGINT (Ctrl-C) stops ii run starting jobs; it waits for those running.
      process.kill(pid, signal);
      for (const s of waiting) await waitFor(() => !isRunning(s), 'the standby to end', 30_000, 100);
      await waitFor(
        () => jobs().every((j) => j.status !== 'active') || null,
        'the running jobs to end',
        120_000,
        300,
      );
      await waitFor(() => runningIn(repo).length === 0, 'no process left', 30_000, 200);
      // The two waiting made no job.
      expect(jobs().filter((j) => waiting.includes(j.pid!))).toEqual([]);
    },
    240_000,
  );

  it('a standby runner: ends without a todo when its stdin ends, and when the todo was taken first exits 75 having made no job', async () => {
    setup(CONFIG);
    const t = create('A');
    // Dismissed (or its ii run gone): exits 0, touching nothing.
    const idle = standbyRunner();
    idle.c.stdin.end();
    expect(await idle.exited, idle.stderr()).toBe(0);
    // Handed a todo that stopped being ready meanwhile (closed here; another runner's claim alike).
    const late = standbyRunner();
    run(['todo', 'close', t]);
    late.c.stdin.end(`${t}\n`);
    expect(await late.exited, late.stderr()).toBe(75);
    expect(jobs()).toEqual([]);
    expect(JSON.parse(run(['todo', 'list', '--status', 'closed', '--json']).stdout)).toHaveLength(1);
  }, 60_000);

  it.skipIf(!existsSync('/proc/self/autogroup'))(
    'a standby runner given fd 3 says "back <code>" when its job is over and takes the next todo; that fd reaches nothing it starts; ended stdin and fd 3 (ii run gone) end it after its job',
    async () => {
      setup(CONFIG);
      const [a, b, c] = ['A', 'B', 'C'].map((t) => create(t));
      // Each implement turn takes a while: the checks below run while B's agent lives.
      const scenario = join(tmp.path, 'slow.json');
      writeFileSync(
        scenario,
        JSON.stringify({ implement: Array(6).fill({ actions: [{ type: 'delay', ms: 1500 }] }) }),
      );
      // Started as ii run starts it (detached.ts): a session of its own, so an
      // autogroup of its own, whose value it can lower again. Not so, in the
      // session of a process that never left the machine's first one (its
      // autogroup file empty), it rightly exits after its job.
      const r = spawn(process.execPath, [II, 'job', 'do', '--backlog', '--standby', '--back', '--no-edit'], {
        cwd: repo,
        env: { ...process.env, NO_COLOR: '1', ...env, II_SCRIPTED_SCENARIO: scenario },
        stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let stderr = '';
      r.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      let said = '';
      const back = r.stdio[3] as NodeJS.ReadableStream;
      back.on('data', (d: Buffer) => (said += d.toString()));
      let gone: number | null | undefined;
      const exited = new Promise<number | null>((res) =>
        r.on('exit', (code) => {
          gone = code;
          res(code);
        }),
      );
      r.stdin!.write(`${a}\n`);
      // Its word, or its exit (then said below, with its stderr): not a wait to the timeout.
      await waitFor(() => said.includes('\n') || gone !== undefined || null, 'A done', 120_000, 100);
      expect({ said, gone }, stderr).toEqual({ said: 'back 0\n', gone: undefined });
      expect(readFileSync(`/proc/${r.pid}/autogroup`, 'utf8')).not.toBe(
        readFileSync('/proc/self/autogroup', 'utf8'),
      );
      expect(jobs().map((j) => [j.todo_id, j.status, j.pid])).toEqual([[a, 'completed', r.pid]]);
      expect(isRunning(r.pid!)).toBe(true);
      // A todo taken first: said as its exit would have said it (75), and it stays.
      run(['todo', 'close', c!]);
      r.stdin!.write(`${c}\n`);
      await waitFor(() => said === 'back 0\nback 75\n' || null, 'C refused', 60_000, 100);
      expect(stderr).toContain('ii: ');
      expect(jobs()).toHaveLength(1);
      // B: its agent runs; nothing but the runner (and this test) holds the socket.
      r.stdin!.write(`${b}\n`);
      await waitFor(
        () => jobs().find((j) => j.todo_id === b && j.status === 'active') ?? null,
        'B running',
        60_000,
        100,
      );
      const socket = readlinkSync(`/proc/${r.pid}/fd/3`);
      expect(socket).toMatch(/^socket:/);
      const agents = await waitFor(
        () => {
          const agents = runningWith('scripted');
          return agents.length > 0 ? agents : null;
        },
        "B's agent",
        60_000,
        50,
      );
      // Its holders but the runner and this test. A child the runner has
      // forked and not yet exec'd holds every fd of the runner's for that
      // moment (exec closes them): one seen here is looked at again.
      const holding = (): number[] =>
        readdirSync('/proc')
          .map(Number)
          .filter((pid) => {
            if (!Number.isInteger(pid) || pid === r.pid || pid === process.pid) return false;
            try {
              return readdirSync(`/proc/${pid}/fd`).some((fd) => {
                try {
                  return readlinkSync(`/proc/${pid}/fd/${fd}`) === socket;
                } catch {
                  return false;
                }
              });
            } catch {
              return false;
            }
          });
      expect(agents.length).toBeGreaterThan(0);
      expect(holding().filter((p) => agents.includes(p))).toEqual([]);
      await waitFor(() => holding().length === 0, 'no other holder of the socket', 10_000, 20);
      // ii run gone (both its pipes closed) while B runs: B ends completed, then so does the runner.
      back.removeAllListeners('data');
      (back as unknown as { destroy(): void }).destroy();
      r.stdin!.end();
      expect(await exited, stderr).toBe(0);
      expect(jobs().find((j) => j.todo_id === b)?.status).toBe('completed');
      await waitFor(() => runningIn(repo).length === 0, 'no process left', 30_000, 200);
    },
    180_000,
  );

  it.skipIf(!existsSync('/proc/self/autogroup'))(
    '--jobs 1: a runner whose job ended comes back for a later todo, each todo has its log, and none is left waiting',
    async () => {
      setup(CONFIG);
      const todos = ['A', 'B', 'C', 'D', 'E'];
      for (const t of todos) create(t);
      const r = await iiAsync(['run', '--jobs', '1']);
      expect(r.code, r.stderr).toBe(0);
      const list = jobs();
      expect(list.map((j) => j.status)).toEqual(todos.map(() => 'completed'));
      // Fewer processes than jobs: a runner ran two of them or more (the first
      // comes back once its wrap-up is done, for the job after the next at the latest).
      const pids = new Set(list.map((j) => j.pid));
      expect(pids.size).toBeLessThan(todos.length);
      // Each todo's output under its own name (a runner come back: the same file, linked).
      const logs = readdirSync(runLogs());
      for (const j of list) expect(logs.filter((f) => f.endsWith(`-${j.todo_id}.log`))).toHaveLength(1);
      expect(logs.filter((f) => f.includes('standby'))).toEqual([]);
      // Gone when ii run returns: the one back from the last job too (ii run waits for it).
      expect(standbys()).toEqual([]);
      expect(runningIn(repo)).toEqual([]);
    },
    240_000,
  );

  it('SIGKILL of ii run strands no job: its runners finish them, and a new ii run carries on', async () => {
    setup(CONFIG);
    const ids = ['A', 'B', 'C', 'D'].map((t) => create(t));
    // Each implement turn takes a moment, so the kill lands while jobs run.
    const scenario = join(tmp.path, 'slow.json');
    writeFileSync(
      scenario,
      JSON.stringify({ implement: Array(20).fill({ actions: [{ type: 'delay', ms: 1500 }] }) }),
    );
    const extra = { II_SCRIPTED_SCENARIO: scenario };
    const pid = iiRunDetachedPid(['run', '--jobs', '2'], extra);
    await waitFor(
      () => jobs().filter((j) => j.status === 'active').length === 2,
      'two jobs running',
      120_000,
      300,
    );
    process.kill(pid, 'SIGKILL');
    const first = jobs().map((j) => j.id);
    // The runners were not the supervisor: both jobs still end completed.
    await waitFor(
      () => jobs().filter((j) => first.includes(j.id) && j.status === 'completed').length === 2,
      'the jobs of the killed ii run completed',
      120_000,
      300,
    );
    const r = await iiAsync(['run', '--jobs', '2']);
    expect(r.code, r.stderr).toBe(0);
    const list = jobs();
    expect(list.map((j) => j.todo_id).sort()).toEqual([...ids].sort());
    expect(list.every((j) => j.status === 'completed')).toBe(true);
  }, 300_000);
});
