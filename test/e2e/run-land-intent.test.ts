// ii run --land killed with SIGKILL: its job runners go on by design and
// complete their jobs, which nobody then landed (21 of 22 such jobs stayed
// completed-not-landed). Each job of a landing run is recorded as to land
// with its claim, so: ii job list and show say "to land", ii run without
// --land lands none of them, the next ii run --land lands them first, in
// the order they completed (the order the killed run would have landed
// them), then its own, each once; a refused landing keeps the intent with
// its refusal and is not tried again by a run. Real processes throughout:
// the built CLI, detached job runners, the scripted agent, git.
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { II, ii, type RunResult } from '../helpers/cli.js';
import { isRunning, runningIn, runningWith } from '../helpers/procs.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { repoSlug } from '../../src/state/index.js';
import { testEnv } from '../helpers/env.js';

interface JobRec {
  id: string;
  todo_id: string;
  status: string;
  completed_at: string | null;
  to_land: boolean;
  landed: { onto: string; commit: string; at: string } | null;
  landing: { state: string; step: string; at: string; pid: number | null } | null;
}

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
const started: ChildProcess[] = [];

beforeEach(() => {
  tmp = tempDir('ii-land-intent-');
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  env = testEnv(tmp.path, {
    II_SCRIPTED_SCENARIO: join(tmp.path, 'scenarios'),
  });
  mkdirSync(join(tmp.path, 'scenarios'));
});
afterEach(async () => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  started.length = 0;
  // Nothing is held on a gate any more: what the test started ends on its own.
  writeFileSync(join(tmp.path, 'open-all'), '');
  rmSync(join(tmp.path, 'hold'), { force: true });
  await waitFor(() => runningIn(tmp.path).length === 0, 'no process left in the test dir', 60_000, 200);
  tmp.cleanup();
});

const run = (args: string[]) => ii(args, { cwd: repo, env });
const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' }).trim();
const jobs = (): JobRec[] => JSON.parse(run(['job', 'list', '--all', '--json']).stdout) as JobRec[];
const byTodo = (todo: string) => jobs().find((j) => j.todo_id === todo)!;

/** ii in the background; resolves when it exits. */
function iiAsync(args: string[]): { child: ChildProcess; done: Promise<RunResult> } {
  const child = spawn(process.execPath, [II, ...args], {
    cwd: repo,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<RunResult>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? -1 : -2), stdout, stderr })),
  );
  return { child, done };
}

/**
 * A todo whose job writes `<name>.txt`, then (with a gate) waits until
 * `gate-<name>` (or `open-all`) exists in the test dir, so the test decides
 * when each job completes.
 */
function todo(name: string, gated = true): string {
  const id = run(['todo', 'create', '--title', name.toUpperCase()]).stdout.trim();
  const gate = `while [ ! -f '${tmp.path}/gate-${name}' ] && [ ! -f '${tmp.path}/open-all' ]; do sleep 0.05; done`;
  writeFileSync(
    join(tmp.path, 'scenarios', `${id}.json`),
    JSON.stringify({
      implement: [
        {
          actions: [
            { type: 'write', path: `${name}.txt`, content: `${name}\n` },
            ...(gated ? [{ type: 'shell', command: gate }] : []),
          ],
        },
        { actions: [] },
      ],
    }),
  );
  return id;
}

/** Lets `name`'s job go on, and waits until it completed. */
async function complete(name: string, todoId: string): Promise<void> {
  writeFileSync(join(tmp.path, `gate-${name}`), '');
  await waitFor(() => byTodo(todoId)?.status === 'completed', `${name}'s job to complete`, 180_000, 300);
}

/** The job runners (ii job do --backlog) of this test still alive. */
const runnersAlive = () => runningIn(repo).length > 0;

it('SIGKILL of ii run --land while its jobs run: they complete "to land", ii run without --land lands none, the next ii run --land lands them first in completion order, then its own, each once; a refused one keeps the intent and is not tried again', async () => {
  gitRepo(repo, {
    'README.md': '# r\n',
    'incrementum.toml': `[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\n`,
  });
  const names = ['a', 'b', 'c', 'd'];
  const ids = Object.fromEntries(names.map((n) => [n, todo(n)]));
  const trunk = git('rev-parse', 'main');

  const first = iiAsync(['run', '--land', '--jobs', '4']);
  await waitFor(
    () => jobs().filter((j) => j.status === 'active').length === 4,
    'four jobs running',
    180_000,
    300,
  );
  // The intent is on each job from its claim, before anything completed.
  expect(jobs().map((j) => j.to_land)).toEqual([true, true, true, true]);
  first.child.kill('SIGKILL');
  await first.done;

  // Its runners go on: completed one at a time, in an order unlike the todos'.
  const order = ['d', 'b', 'a', 'c'];
  for (const n of order) await complete(n, ids[n]!);
  await waitFor(() => !runnersAlive(), 'the job runners to exit', 60_000, 200);
  const orderIds = order.map((n) => byTodo(ids[n]!).id);

  // Shown as to land: by default (what is still to happen), in --json with the model's keys, in job show.
  const listed = run(['job', 'list']).stdout;
  expect(listed.match(/to land/g), listed).toHaveLength(4);
  const asJson = JSON.parse(run(['job', 'list', '--json']).stdout) as JobRec[];
  expect(asJson.map((j) => j.id).sort()).toEqual([...orderIds].sort());
  for (const j of asJson) expect(j).toMatchObject({ status: 'completed', to_land: true, landed: null });
  expect(run(['job', 'show', orderIds[0]!]).stdout).toContain('not yet: to land (started by ii run --land)');
  expect(git('rev-parse', 'main')).toBe(trunk);

  // ii run without --land lands none of them, and says what would.
  const plain = iiAsync(['run']);
  const p = await plain.done;
  expect(p.code, p.stderr).toBe(0);
  expect(p.stderr).toContain(
    `4 completed jobs are to land (started by ii run --land): ${orderIds.join(', ')}; this run lands nothing`,
  );
  expect(git('rev-parse', 'main')).toBe(trunk);
  expect(jobs().every((j) => j.to_land && !j.landed && !j.landing)).toBe(true);

  // c's landing will be refused: the checkout has an untracked c.txt in its way.
  writeFileSync(join(repo, 'c.txt'), 'mine\n');
  // A todo of the next run's own.
  const e = todo('e', false);

  const second = iiAsync(['run', '--land', '--jobs', '1']);
  const s = await second.done;
  expect(s.code, s.stderr).toBe(1); // c was not landed
  expect(s.stderr).toContain(
    `to land first, left by an earlier ii run --land (oldest completion first): ${orderIds.join(', ')}`,
  );
  expect(s.stderr).toContain('landed 4 jobs (3 of them left to land by an earlier ii run --land)');
  const cJob = byTodo(ids.c!);
  expect(s.stderr).toContain(`job ${cJob.id} not landed`);
  const eJob = byTodo(e);
  // Landed in completion order, the run's own last; c skipped, refused.
  const landedOrder = jobs()
    .filter((j) => j.landed)
    .sort((x, y) => (x.landed!.at < y.landed!.at ? -1 : 1))
    .map((j) => j.id);
  expect(landedOrder).toEqual([...orderIds.filter((id) => id !== cJob.id), eJob.id]);
  // Each once: main is the initial commit and the four landed, linear, in that order.
  const mainLog = git('rev-list', '--reverse', `${trunk}..main`).split('\n');
  expect(mainLog).toEqual(landedOrder.map((id) => jobs().find((j) => j.id === id)!.landed!.commit));
  expect(git('rev-list', '--merges', 'main')).toBe('');
  expect(git('ls-tree', '--name-only', 'main').split('\n').sort()).toEqual([
    'README.md',
    'a.txt',
    'b.txt',
    'd.txt',
    'e.txt',
    'incrementum.toml',
  ]);
  for (const j of jobs().filter((j) => j.landed)) expect(j.to_land).toBe(false);

  // The refused one keeps its intent, with the refusal shown; a run does not try it again.
  const refused = byTodo(ids.c!);
  expect(refused).toMatchObject({ status: 'completed', to_land: true, landed: null });
  expect(refused.landing?.state).toBe('refused');
  expect(run(['job', 'list']).stdout).toContain('to land (refused)');
  expect(run(['job', 'show', refused.id]).stdout).toContain('no landing runner tries it again');
  const third = iiAsync(['run', '--land']);
  const t = await third.done;
  expect(t.code, t.stderr).toBe(0);
  expect(t.stderr).toContain(`job ${refused.id} is to land, but its landing was refused`);
  expect(t.stderr).toContain('landed 0 jobs');
  expect(byTodo(ids.c!).landing).toEqual(refused.landing);
  expect(git('rev-list', '--count', `${trunk}..main`)).toBe('4');

  // A person settles it: out of the way, ii job land lands it, and it is no longer to land.
  rmSync(join(repo, 'c.txt'));
  const land = run(['job', 'land', refused.id]);
  expect(land.code, land.stderr).toBe(0);
  expect(byTodo(ids.c!)).toMatchObject({ to_land: false });
  expect(byTodo(ids.c!).landed?.onto).toBe('main');
  expect(git('rev-list', '--count', `${trunk}..main`)).toBe('5');
}, 600_000);

it('SIGKILL of ii run --land during a landing, while its other runners finish: the next ii run --land takes over the dead landing and lands all three in completion order, once each', async () => {
  // The test command holds a landing (it runs in a landing worktree) while
  // `hold` exists, saying it started; the jobs' own test runs pass through.
  const t = tmp.path;
  const test =
    `case "$PWD" in */incrementum/landing/*) touch '${t}/landing-started'; ` +
    `while [ -f '${t}/hold' ]; do sleep 0.05; done; touch '${t}/landing-released';; esac; test -f README.md`;
  gitRepo(repo, {
    'README.md': '# r\n',
    // The sandbox lets the test command leave its marks in `t` because it says so.
    'incrementum.toml':
      `[agent]\npreset = "scripted"\n\n[job]\ntest-commands = [${JSON.stringify(test)}]\nauto-commit = false\n` +
      `\n[sandbox]\nwritable = ["${t}"]\n`,
  });
  writeFileSync(join(t, 'hold'), '');
  const ids = Object.fromEntries(['a', 'b', 'c'].map((n) => [n, todo(n)]));
  const trunk = git('rev-parse', 'main');

  const first = iiAsync(['run', '--land', '--jobs', '3']);
  await waitFor(
    () => jobs().filter((j) => j.status === 'active').length === 3,
    'three jobs running',
    180_000,
    300,
  );
  // a completes and its landing starts, held in its test run.
  await complete('a', ids.a!);
  await waitFor(() => existsSync(join(t, 'landing-started')), "a's landing to start", 120_000, 200);
  const a = byTodo(ids.a!);
  expect(a.landing?.state).toBe('landing');
  // b completes meanwhile (queued behind a), and the supervisor is killed
  // while c's runner is still at work.
  await complete('b', ids.b!);
  first.child.kill('SIGKILL');
  const killed = await first.done;
  expect(killed.stderr).not.toContain('landed on');
  await complete('c', ids.c!);
  // The killed landing's test command lets go; it has no one to report to.
  // (In the job sandbox it ended already, with the runner it belonged to.)
  rmSync(join(t, 'hold'));
  await waitFor(
    () => existsSync(join(t, 'landing-released')) || runningWith(`${t}/hold`).length === 0,
    'the orphaned test command to end',
    60_000,
    100,
  );
  await waitFor(() => !runnersAlive(), 'the job runners to exit', 60_000, 200);

  // Nothing landed; a's landing is recorded as under way by a process that is gone.
  expect(git('rev-parse', 'main')).toBe(trunk);
  const left = jobs();
  expect(left.every((j) => j.status === 'completed' && j.to_land && !j.landed)).toBe(true);
  expect(isRunning(byTodo(ids.a!).landing!.pid!)).toBe(false);
  expect(run(['job', 'show', a.id]).stdout).toContain('its process is gone: the next ii run --land lands it');
  const completionOrder = [...left]
    .sort((x, y) => (x.completed_at! < y.completed_at! ? -1 : 1))
    .map((j) => j.todo_id);
  expect(completionOrder).toEqual([ids.a, ids.b, ids.c]);

  const second = iiAsync(['run', '--land']);
  const s = await second.done;
  expect(s.code, s.stderr).toBe(0);
  expect(s.stderr).toContain('landed 3 jobs (3 of them left to land by an earlier ii run --land)');
  const landed = jobs().sort((x, y) => (x.landed!.at < y.landed!.at ? -1 : 1));
  expect(landed.map((j) => j.todo_id)).toEqual([ids.a, ids.b, ids.c]);
  expect(git('rev-list', '--reverse', `${trunk}..main`).split('\n')).toEqual(
    landed.map((j) => j.landed!.commit),
  );
  expect(git('rev-list', '--merges', 'main')).toBe('');
  expect(landed.every((j) => !j.to_land && j.landing === null)).toBe(true);
  // The dead landing's worktree went with the new landing.
  const landingDir = join(t, 'state', 'incrementum', 'landing', repoSlug(repo));
  expect(existsSync(landingDir) ? readdirSync(landingDir) : []).toEqual([]);
}, 600_000);

it('two ii run --land at once on the jobs a killed one left land each exactly once, in completion order; ii run --help says only a landing run lands them', async () => {
  gitRepo(repo, {
    'README.md': '# r\n',
    'incrementum.toml': `[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\n`,
  });
  const ids = ['a', 'b', 'c'].map((n) => todo(n));
  const trunk = git('rev-parse', 'main');
  const first = iiAsync(['run', '--land', '--jobs', '3']);
  await waitFor(
    () => jobs().filter((j) => j.status === 'active').length === 3,
    'three jobs running',
    180_000,
    300,
  );
  first.child.kill('SIGKILL');
  await first.done;
  writeFileSync(join(tmp.path, 'open-all'), '');
  await waitFor(
    () => jobs().filter((j) => j.status === 'completed').length === 3,
    'the jobs to complete',
    180_000,
    300,
  );
  await waitFor(() => !runnersAlive(), 'the job runners to exit', 60_000, 200);

  const [r1, r2] = await Promise.all([iiAsync(['run', '--land']).done, iiAsync(['run', '--land']).done]);
  expect([r1.code, r2.code], r1.stderr + r2.stderr).toEqual([0, 0]);
  // Between them, each job once: three landings said, three commits on main.
  const said = (r1.stderr + r2.stderr).match(/^job \S+ landed on main/gm) ?? [];
  expect(said).toHaveLength(3);
  expect(new Set(said).size).toBe(3);
  const list = jobs();
  expect(list.map((j) => j.todo_id).sort()).toEqual([...ids].sort());
  expect(list.every((j) => j.landed?.onto === 'main' && !j.to_land)).toBe(true);
  expect(git('rev-list', '--count', `${trunk}..main`)).toBe('3');
  expect(new Set(list.map((j) => j.landed!.commit)).size).toBe(3);
  // And in completion order, whichever run landed each: one waits while the other lands an older one.
  const byLanding = [...list].sort((x, y) => (x.landed!.at < y.landed!.at ? -1 : 1)).map((j) => j.id);
  const byCompletionOrder = [...list]
    .sort((x, y) => (x.completed_at! < y.completed_at! ? -1 : 1))
    .map((j) => j.id);
  expect(byLanding).toEqual(byCompletionOrder);
  expect(git('rev-list', '--reverse', `${trunk}..main`).split('\n')).toEqual(
    byLanding.map((id) => list.find((j) => j.id === id)!.landed!.commit),
  );
  expect(git('ls-tree', '--name-only', 'main').split('\n').sort()).toEqual([
    'README.md',
    'a.txt',
    'b.txt',
    'c.txt',
    'incrementum.toml',
  ]);

  const help = run(['run', '--help']).stdout.replace(/\s+/g, ' ');
  expect(help).toContain('A run without --land lands nothing, theirs included');
  expect(help).toContain('only a landing run acts on it');
}, 600_000);
