// A runner that dies or loses its output must not leave its job behind:
// kill -9 (its agent and test commands keep running, recorded by process
// group, and whoever cleans up ends them before the workspace is released),
// a retry of the stale job, a closed pipe, a closed terminal (SIGHUP), and a
// hanging test command. The built CLI, real git, the scripted ACP agent.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { JobFixture, jobIdFrom, write, type JobJson } from '../helpers/job.js';
import { runningIn, runningInGroup, runningWith } from '../helpers/procs.js';
import { waitFor } from '../helpers/tmp.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-death-');
});
afterEach(() => {
  // Never leave a stray process on a shared machine, even when a test fails.
  for (const pid of runningIn(f.tmp.path))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  f.cleanup();
});

/** The process groups of everything working in `dir`. */
function groupsIn(dir: string): number[] {
  const out = new Set<number>();
  for (const pid of runningIn(dir)) {
    try {
      const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
      out.add(Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[2]));
    } catch {}
  }
  return [...out];
}

const activeJobs = () => JSON.parse(f.run(['job', 'list', '--json']).stdout) as JobJson[];

// The hanging work of each case ignores SIGTERM: only SIGKILL of its group ends it.
const STUBBORN_TEST = "test ! -f a.txt || (trap '' TERM; sleep 6061)";
const CASES = [
  {
    what: 'an agent that ignores SIGTERM and EOF',
    tests: ['true'],
    // Stubborn from the start, so that it already ignores EOF when a.txt appears.
    turns: { implement: [{ actions: [{ type: 'stubborn' }, write('a.txt', 'a\n'), { type: 'hang' }] }] },
    line: '→ implementing',
    marker: 'scripted/main.js',
  },
  {
    what: 'a test command that ignores SIGTERM',
    tests: [STUBBORN_TEST],
    turns: { implement: [{ actions: [write('a.txt', 'a\n')] }] },
    line: '→ testing',
    marker: 'sleep 6061',
  },
];

/**
 * Starts a job, waits until `line` and its hanging work, kills the runner
 * with SIGKILL. Unsandboxed ([sandbox] mode = "off"): in the job sandbox what
 * the runner started dies with it (bwrap --die-with-parent), so these test
 * the cleanup behind it, for jobs that run without one.
 */
async function killRunner(c: (typeof CASES)[number]) {
  f.setup(c.tests, { job: '\n[sandbox]\nmode = "off"\n' });
  const s = f.scenario('stuck', c.turns);
  const job = f.spawn(['job', 'do', '--title', 'runner dies'], s);
  await waitFor(() => job.stderr().includes(c.line), c.line);
  const id = jobIdFrom(job.stderr());
  const ws = f.show(id).workspace_path!;
  // The agent (implementing) or the test's sleep (testing) runs in the workspace.
  await waitFor(
    () => existsSync(join(ws, 'a.txt')) && runningWith(c.marker).some((pid) => runningIn(ws).includes(pid)),
    'the stage to start its work',
  );
  const groups = groupsIn(ws);
  job.child.kill('SIGKILL');
  await job.exit;
  return { id, ws, groups };
}

// Each test runs one or two whole jobs plus cleanups with grace periods: on a
// loaded 2-core machine that is well past vitest's default minute.
const SLOW = { timeout: 180_000 };

describe('a runner killed with SIGKILL', SLOW, () => {
  for (const c of CASES) {
    it(`with ${c.what}: ii job abandon ends its process groups, then frees the workspace`, async () => {
      const { id, ws, groups } = await killRunner(c);
      // What the runner started outlives it, still in the workspace, which is still claimed.
      expect(groups.length).toBeGreaterThan(0);
      expect(runningIn(ws).length).toBeGreaterThan(0);
      expect(f.workspaces().map((w) => w.status)).toEqual(['acquired']);

      const a = f.run(['job', 'abandon', id]);
      expect(a.code).toBe(0);
      expect(a.stdout).toMatch(
        new RegExp(
          `job ${id} abandoned \\(its runner was gone\\): ended 1 process group it left running; workspace released; todo reopened`,
        ),
      );
      for (const g of groups) expect(runningInGroup(g)).toEqual([]);
      expect(runningIn(ws)).toEqual([]);
      expect(f.workspaces().map((w) => w.status)).toEqual(['free']);
      expect(f.show(id).status).toBe('abandoned');
      expect(f.todos('open')).toHaveLength(1);
    });
  }

  it('ii job retry of the stale job ends the old one (failed, runner gone) before running the new one', async () => {
    const { id, ws, groups } = await killRunner(CASES[0]!);
    const quick = f.scenario('quick', { implement: [{ actions: [write('q.txt', 'q\n')] }] });
    const r = f.run(['job', 'retry', id], quick);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        `job ${id} failed \\(its runner was gone\\): ended 1 process group it left running; workspace released; todo reopened`,
      ),
    );
    const old = f.show(id);
    expect(old.status).toBe('failed');
    expect(old.failure_reason).toMatch(/its runner \(pid \d+\) was gone; retried/);
    const retried = f.show(jobIdFrom(r.stderr));
    expect(retried.retried_from).toBe(id);
    expect(retried.status).toBe('completed');
    for (const g of groups) expect(runningInGroup(g)).toEqual([]);
    expect(runningIn(ws)).toEqual([]);
    expect(activeJobs()).toEqual([]);
    expect(f.workspaces().every((w) => w.status === 'free')).toBe(true);
    expect(f.todos('done')).toHaveLength(1);
    // Abandoning the old job now is refused: it really ended.
    expect(f.run(['job', 'abandon', id]).stderr).toMatch(/already failed/);
  });
});

describe('a runner killed with SIGKILL, cleaned up by other commands', SLOW, () => {
  it('ii job do on the same todo ends the stale job first', async () => {
    const { id, ws, groups } = await killRunner(CASES[1]!);
    const todo = f.show(id) as JobJson & { todo_id: string };
    // The new job writes q.txt, not a.txt, so its test passes at once.
    const quick = f.scenario('quick', { implement: [{ actions: [write('q.txt', 'q\n')] }] });
    const r = f.run(['job', 'do', todo.todo_id], quick);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        `job ${id} of this todo failed \\(its runner was gone\\): ended 1 process group it left running`,
      ),
    );
    expect(f.show(id).status).toBe('failed');
    for (const g of groups) expect(runningInGroup(g)).toEqual([]);
    expect(runningIn(ws)).toEqual([]);
    expect(activeJobs()).toEqual([]);
  });

  it('ii workspace prune ends the stale job and what it left, then removes its workspace', async () => {
    const { id, ws, groups } = await killRunner(CASES[1]!);
    const r = f.run(['workspace', 'prune']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `job ${id} failed \\(its runner was gone\\): ended 1 process group it left running; workspace released; todo reopened`,
      ),
    );
    expect(r.stdout).toContain(`removed ${ws}`);
    for (const g of groups) expect(runningInGroup(g)).toEqual([]);
    expect(runningIn(ws)).toEqual([]);
    expect(existsSync(ws)).toBe(false);
    expect(f.show(id).status).toBe('failed');
    expect(f.todos('open')).toHaveLength(1);
  });
});

describe('a runner that loses its output or its terminal', SLOW, () => {
  it('ii job do 2>&1 | head -1: the job still ends, its workspace free, nothing left running', async () => {
    f.setup();
    const s = f.scenario('chatty', {
      implement: [
        {
          actions: [
            write('a.txt', 'a\n'),
            { type: 'message', text: 'x'.repeat(200_000) },
            { type: 'delay', ms: 500 },
          ],
        },
      ],
    });
    // head exits after the first line, so every later write of the runner
    // (stdout and stderr both) meets a closed pipe.
    const sh = spawn('/bin/sh', ['-c', `"${process.execPath}" "${II}" job do --title piped 2>&1 | head -1`], {
      cwd: f.repo,
      env: { ...process.env, NO_COLOR: '1', ...f.env, II_SCRIPTED_SCENARIO: s },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    sh.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((res) => sh.on('close', res));
    const id = jobIdFrom(out);
    expect(id).not.toBe('');
    const job = await waitFor(() => {
      const j = f.show(id);
      return j.status !== 'active' ? j : null;
    }, 'the job to end');
    expect(['completed', 'failed']).toContain(job.status);
    await waitFor(() => runningIn(f.tmp.path).length === 0, 'no process of the job left');
    expect(activeJobs()).toEqual([]);
    expect(f.workspaces().every((w) => w.status === 'free')).toBe(true);
    expect(f.todos('in_progress')).toEqual([]);
  });

  it('kill -HUP of the runner (a closed terminal) ends the job like Ctrl-C', async () => {
    f.setup();
    const s = f.scenario('slow', { implement: [{ actions: [{ type: 'delay', ms: 60_000 }] }] });
    const job = f.spawn(['job', 'do', '--title', 'hung up'], s);
    await waitFor(() => job.stderr().includes('→ implementing'), 'the implementing stage');
    await waitFor(
      () => runningWith('scripted/main.js').some((p) => runningIn(f.tmp.path).includes(p)),
      'the agent',
    );
    job.child.kill('SIGHUP');
    expect(await job.exit).toBe(1);
    const id = jobIdFrom(job.stderr());
    const rec = f.show(id);
    expect(rec.status).toBe('failed');
    expect(rec.failure_reason).toMatch(/interrupted \(SIGHUP\)/);
    await waitFor(() => runningIn(f.tmp.path).length === 0, 'no process of the job left');
    expect(f.workspaces().every((w) => w.status === 'free')).toBe(true);
    expect(f.todos('open')).toHaveLength(1);
  });

  it('read commands piped into head -1 exit 0, with no stack trace', async () => {
    f.setup();
    const s = f.scenario('long', {
      implement: [{ actions: [write('a.txt', 'a\n'), { type: 'message', text: 'y'.repeat(300_000) }] }],
    });
    const r = f.run(['job', 'do', '--title', 'long log'], s);
    expect(r.code).toBe(0);
    const id = jobIdFrom(r.stderr);
    for (const args of [
      ['job', 'logs', id],
      ['job', 'logs', id, '--json'],
      ['job', 'show', id, '--json'],
    ]) {
      // Like head -1: read the first line, then close the pipe while ii still writes.
      const child = spawn(process.execPath, [II, ...args], {
        cwd: f.repo,
        env: { ...process.env, NO_COLOR: '1', ...f.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout.once('data', () => child.stdout.destroy());
      const code = await new Promise<number | null>((res) => child.on('close', res));
      expect({ args, code, err }).toEqual({ args, code: 0, err: '' });
    }
  });
});

describe('a test command that hangs', SLOW, () => {
  it('is ended after [job] test-timeout-seconds and the feedback says it timed out', async () => {
    f.setup([STUBBORN_TEST], { job: 'test-timeout-seconds = 2\nmax-iterations = 1\n' });
    const s = f.scenario('hangs', { implement: [{ actions: [write('a.txt', 'a\n')] }] });
    const r = await f.runAsync(['job', 'do', '--title', 'hanging test'], s);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`\`${STUBBORN_TEST}\` timed out after 2 s`);
    const job = f.show(jobIdFrom(r.stderr));
    const commit = job.changes[0]!.commits[0]!;
    expect(commit.tests_passed).toBe(false);
    // The feedback of a next iteration would be this table.
    const { testFailureTable } = await import('../../src/job/test-runner.js');
    const results = (commit as unknown as { test_results: Parameters<typeof testFailureTable>[0] })
      .test_results;
    expect(results[0]).toMatchObject({ exit_code: 124, timed_out_after_s: 2 });
    expect(testFailureTable(results)).toContain('| timed out after 2 s |');
    await waitFor(
      () => !runningWith('sleep 6061').some((p) => runningIn(f.tmp.path).includes(p)),
      'the hanging test to be gone',
    );
    expect(f.workspaces().every((w) => w.status === 'free')).toBe(true);
  });
});
