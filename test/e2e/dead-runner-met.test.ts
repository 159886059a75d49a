// A job whose runner was killed (kill -9) is cleaned up by whoever meets it,
// as ii workspace prune does: ii run, ii job list, ii todo list. The job
// fails saying its runner was gone, its todo is open again (the failure is
// an attempt), its workspace is free, and what it left running is ended;
// a job whose runner lives is never touched. The built CLI, real git, the
// scripted ACP agent, real processes.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { II, type RunResult } from '../helpers/cli.js';
import { JobFixture, jobIdFrom, write, type JobJson } from '../helpers/job.js';
import { isRunning, runningIn, runningWith } from '../helpers/procs.js';
import { waitFor } from '../helpers/tmp.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import type { Job } from '../../src/model/job.js';

let f: JobFixture;
const MINE = `sleep 700${process.pid}.`;
beforeEach(() => {
  f = new JobFixture('ii-met-');
});
afterEach(() => {
  for (const pid of [...runningWith(MINE), ...runningIn(f.tmp.path)])
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  f.cleanup();
});

let n = 0;
/** An implement turn that leaves a setsid sleep in the workspace, then hangs: the runner is killed there. */
function hanging(): { scenario: string; sleep: string } {
  const sleep = `${MINE}${++n}`;
  const scenario = f.scenario(`hang${n}`, {
    implement: [
      {
        actions: [
          { type: 'shell', command: `setsid sh -c '${sleep}; :' </dev/null >/dev/null 2>&1 &` },
          { type: 'hang' },
        ],
      },
    ],
  });
  return { scenario, sleep };
}

/** The jobs as the store has them, read without any ii command (which would clean them up). */
function storedJobs(): Job[] {
  const store = openStateStore({ dir: join(f.tmp.path, 'state', 'incrementum') });
  try {
    return store.jobs.list(repoSlug(f.repo));
  } finally {
    store.close();
  }
}

/** `ii job do --title <title>` on a hanging agent, killed with SIGKILL once its agent has started its sleep. */
async function killedJob(title: string) {
  const h = hanging();
  const job = f.spawn(['job', 'do', '--title', title], h.scenario);
  await waitFor(() => runningWith(h.sleep).length > 0, 'the agent to start its sleep', 60_000);
  const id = jobIdFrom(job.stderr());
  job.child.kill('SIGKILL');
  await job.exit;
  const stored = storedJobs().find((j) => j.id === id)!;
  expect(stored.status).toBe('active');
  return { id, sleep: h.sleep, ws: stored.workspace_path!, pid: job.child.pid! };
}

const SLOW = { timeout: 240_000 };

describe('a job whose runner was killed, met by a command', SLOW, () => {
  it('ii job list fails it (its runner was gone), reopens its todo (an attempt counted), frees its workspace, ends what it left', async () => {
    // One attempt per todo: the failure the cleanup records is that attempt.
    f.setup(['true'], { job: '\n[run]\nmax-attempts = 1\n' });
    const { id, sleep, ws, pid } = await killedJob('killed');
    const r = f.run(['job', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`job ${id} failed \\(its runner was gone\\): .*todo reopened`));
    expect(r.stdout).toMatch(/No active jobs/);
    const shown = JSON.parse(f.run(['job', 'list', '--all', '--json']).stdout) as JobJson[];
    const job = shown.find((j) => j.id === id)!;
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toBe(`its runner (pid ${pid}) was gone; cleaned up by ii job list`);
    expect(f.todos('open')).toHaveLength(1);
    expect(f.workspaces().map((w) => w.status)).toEqual(['free']);
    expect(runningWith(sleep)).toEqual([]);
    expect(runningIn(ws)).toEqual([]);
    // Said once: the next look finds nothing to clean up.
    expect(f.run(['job', 'list']).stderr).toBe('');
    expect(JSON.parse(f.run(['todo', 'list', '--ready', '--json']).stdout)).toEqual([]);
    expect(f.run(['todo', 'list']).stdout).toMatch(/\bblocked\b/);
  });

  it('ii todo list shows its todo open again, and why the job failed', async () => {
    f.setup(['true']);
    const { id, sleep } = await killedJob('killed');
    const r = f.run(['todo', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`job ${id} failed \\(its runner was gone\\)`));
    expect(r.stdout).toMatch(/\bopen\b/);
    expect(r.stdout).not.toMatch(/in_progress/);
    expect(f.show(id).failure_reason).toMatch(/its runner \(pid \d+\) was gone; cleaned up by ii todo list/);
    expect(runningWith(sleep)).toEqual([]);
  });

  it('a job whose runner lives is left alone', async () => {
    f.setup(['true']);
    const h = hanging();
    const job = f.spawn(['job', 'do', '--title', 'alive'], h.scenario);
    await waitFor(() => runningWith(h.sleep).length > 0, 'the agent to start its sleep', 60_000);
    const id = jobIdFrom(job.stderr());
    for (const args of [
      ['job', 'list'],
      ['todo', 'list'],
    ]) {
      const r = f.run(args);
      expect(r.stderr).toBe('');
    }
    expect(f.show(id).status).toBe('active');
    expect(isRunning(job.child.pid!)).toBe(true);
    expect(runningWith(h.sleep)).not.toEqual([]);
    job.child.kill('SIGTERM');
    await job.exit;
  });
});

/** ii in the background; resolves when it exits. */
function iiAsync(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [II, ...args], {
      cwd: f.repo,
      env: { ...process.env, NO_COLOR: '1', ...f.env, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('ii run after its job runners were killed', SLOW, () => {
  it('cleans up their jobs and completes every todo, with no prune', async () => {
    f.setup(['true']);
    const todos = ['one', 'two', 'three'].map((t) => f.run(['todo', 'create', '--title', t]).stdout.trim());
    const h = hanging();
    // A first ii run whose jobs hang; it and its runners are killed with SIGKILL.
    const first = spawn(process.execPath, [II, 'run', '--jobs', '2'], {
      cwd: f.repo,
      env: { ...process.env, NO_COLOR: '1', ...f.env, II_SCRIPTED_SCENARIO: h.scenario },
      stdio: 'ignore',
    });
    await waitFor(
      () =>
        storedJobs().filter((j) => j.status === 'active').length === 2 && runningWith(h.sleep).length >= 2,
      'two jobs to hang',
      90_000,
    );
    first.kill('SIGKILL');
    const killed = storedJobs().filter((j) => j.status === 'active');
    for (const j of killed) process.kill(j.pid!, 'SIGKILL');
    await waitFor(() => killed.every((j) => !isRunning(j.pid!)), 'the runners to die');

    const quick = f.scenario('quick', { implement: [{ actions: [write('q.txt', 'q\n')] }] });
    const r = await iiAsync(['run', '--jobs', '2'], { II_SCRIPTED_SCENARIO: quick });
    expect(r.code, r.stderr).toBe(0);
    // Its cleanup runs beside the run's first starts: the todo is reopened, or,
    // when a new job took it first, left to that job (each todo still runs once: below).
    for (const j of killed)
      expect(r.stderr).toMatch(
        new RegExp(
          `job ${j.id} failed \\(its runner was gone\\): .*todo (reopened|left in progress \\(another job is on it\\))`,
        ),
      );
    expect(r.stderr).toMatch(/ran 3 jobs: 3 completed/);
    const after = storedJobs();
    for (const j of killed) {
      const now = after.find((x) => x.id === j.id)!;
      expect(now.status).toBe('failed');
      expect(now.failure_reason).toBe(`its runner (pid ${j.pid}) was gone; cleaned up by ii run`);
    }
    for (const t of todos)
      expect(
        after.filter((j) => j.todo_id === t && j.status === 'completed'),
        t,
      ).toHaveLength(1);
    expect(f.todos('done')).toHaveLength(3);
    expect(runningWith(h.sleep)).toEqual([]);
  });
});

describe('ii run whose own job runner is killed', SLOW, () => {
  it('cleans up that job at once and runs its todo again in the same run', async () => {
    f.setup(['true']);
    const todo = f.run(['todo', 'create', '--title', 'killed once']).stdout.trim();
    // The first implement turn hangs (the runner is killed there); the next job's turns have run out: it completes.
    const h = hanging();
    const run = spawn(process.execPath, [II, 'run', '--jobs', '1'], {
      cwd: f.repo,
      env: { ...process.env, NO_COLOR: '1', ...f.env, II_SCRIPTED_SCENARIO: h.scenario },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    run.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exit = new Promise<number | null>((res) => run.on('close', res));
    await waitFor(() => runningWith(h.sleep).length > 0, 'the first job to hang', 90_000);
    const first = storedJobs().find((j) => j.status === 'active')!;
    process.kill(first.pid!, 'SIGKILL');
    expect(await exit).toBe(1); // one of its jobs failed, as the summary says
    expect(err).toMatch(
      new RegExp(`job ${first.id} failed: its runner \\(pid ${first.pid}\\) was gone; cleaned up by ii run`),
    );
    expect(err).toMatch(/ran 2 jobs: 1 completed, 1 did not/);
    const jobs = storedJobs();
    expect(jobs.find((j) => j.id === first.id)!.status).toBe('failed');
    expect(jobs.filter((j) => j.todo_id === todo && j.status === 'completed')).toHaveLength(1);
    expect(f.todos('done')).toHaveLength(1);
    expect(runningWith(h.sleep)).toEqual([]);
  });
});
