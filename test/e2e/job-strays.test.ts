// What a job starts outside its process groups: an agent's (or a test's)
// `setsid sh -c 'sleep …' &` is a new session and a new group, so ending the
// groups misses it. It is found by its directory (inside the workspace) or by
// the job's id in its environment (after a `cd /`), and ended when the job
// ends, when it is abandoned, and when a dead runner's job is cleaned up; a
// workspace a process still works in is never removed. The built CLI, real
// git, the scripted ACP agent, real processes.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, write } from '../helpers/job.js';
import { isRunning, runningIn, runningWith } from '../helpers/procs.js';
import { waitFor } from '../helpers/tmp.js';

let f: JobFixture;
/**
 * Unsandboxed ([sandbox] mode = "off"): these test the line behind the
 * sandbox, for jobs that run without one; inside it what an agent or a
 * test starts dies with it (test/e2e/sandbox.test.ts).
 */
const UNSANDBOXED = { job: '\n[sandbox]\nmode = "off"\n' };
/** Every sleep of this file's processes carries this in its duration (600<pid>.<n> seconds). */
const MINE = `sleep 600${process.pid}.`;
beforeEach(() => {
  f = new JobFixture('ii-strays-');
});
afterEach(() => {
  // Never leave a stray process on a shared machine, even when a test fails.
  for (const pid of [...runningWith(MINE), ...runningIn(f.tmp.path)])
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  f.cleanup();
});

let n = 0;
/** A sleep's command line, unique to this test file and call. */
const sleepOf = () => `${MINE}${++n}`;

/**
 * Shell lines that leave two setsid sleeps behind: one working in the
 * directory it was started in (the workspace), one that went to / first
 * (found only by the job's id in its environment).
 */
function escapees(): { inWs: string; gone: string; shell: string[] } {
  const inWs = sleepOf();
  const gone = sleepOf();
  return {
    inWs,
    gone,
    shell: [
      `setsid sh -c '${inWs}; :' </dev/null >/dev/null 2>&1 &`,
      `cd / && setsid sh -c '${gone}; :' </dev/null >/dev/null 2>&1 &`,
    ],
  };
}

const running = (cmd: string) => runningWith(cmd).length > 0;
const SLOW = { timeout: 180_000 };

describe('processes a job started in a session of their own', SLOW, () => {
  it('are gone when the job ends normally, the agent’s and a test command’s', async () => {
    const agent = escapees();
    const test = sleepOf();
    // The test command's escapee leaves the workspace too: only II_JOB_ID finds it.
    f.setup(
      [`test ! -f a.txt || (cd / && setsid sh -c '${test}; :' </dev/null >/dev/null 2>&1 &)`],
      UNSANDBOXED,
    );
    const s = f.scenario('strays', {
      implement: [
        {
          actions: [...agent.shell.map((command) => ({ type: 'shell', command })), write('a.txt', 'a\n')],
        },
      ],
    });
    const job = f.spawn(['job', 'do', '--title', 'leaves strays'], s);
    // All three run at once before the job ends (the tests run after the agent's turn).
    await waitFor(
      () => (running(agent.inWs) && running(agent.gone) && running(test)) || !isRunning(job.child.pid!),
      'the strays to start',
      60_000,
    );
    expect(await job.exit).toBe(0);
    const id = jobIdFrom(job.stderr());
    expect(f.show(id).status).toBe('completed');
    expect(running(agent.inWs)).toBe(false);
    expect(running(agent.gone)).toBe(false);
    expect(running(test)).toBe(false);
    expect(job.stderr()).toMatch(/ended \d+ process(es)? the job left running outside its process groups/);
  });

  it('are gone after ii job abandon of the running job', async () => {
    const agent = escapees();
    f.setup(['true'], UNSANDBOXED);
    const s = f.scenario('hang', {
      implement: [
        { actions: [...agent.shell.map((command) => ({ type: 'shell', command })), { type: 'hang' }] },
      ],
    });
    const job = f.spawn(['job', 'do', '--title', 'abandoned with strays'], s);
    await waitFor(() => running(agent.inWs) && running(agent.gone), 'the strays to start', 60_000);
    const id = jobIdFrom(job.stderr());
    expect(f.run(['job', 'abandon', id]).code).toBe(0);
    await waitFor(() => f.show(id).status === 'abandoned', 'the job to be abandoned', 30_000);
    await job.exit;
    expect(running(agent.inWs)).toBe(false);
    expect(running(agent.gone)).toBe(false);
  });

  it('are gone after ii workspace prune of the job whose runner was killed', async () => {
    const agent = escapees();
    f.setup(['true'], UNSANDBOXED);
    const s = f.scenario('hang', {
      implement: [
        { actions: [...agent.shell.map((command) => ({ type: 'shell', command })), { type: 'hang' }] },
      ],
    });
    const job = f.spawn(['job', 'do', '--title', 'runner killed'], s);
    await waitFor(() => running(agent.inWs) && running(agent.gone), 'the strays to start', 60_000);
    const id = jobIdFrom(job.stderr());
    const ws = f.show(id).workspace_path!;
    job.child.kill('SIGKILL');
    await job.exit;
    // Its runner is gone; what it started is not.
    expect(running(agent.inWs) && running(agent.gone)).toBe(true);
    const r = f.run(['workspace', 'prune']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`job ${id} failed \\(its runner was gone\\): .*ended \\d+ other processes it left running`),
    );
    expect(r.stdout).toContain(`removed ${ws}`);
    expect(running(agent.inWs)).toBe(false);
    expect(running(agent.gone)).toBe(false);
    expect(existsSync(ws)).toBe(false);
  });
});

describe('ii workspace prune', SLOW, () => {
  it('keeps a workspace a process still works in, naming it, and removes it once it has ended', async () => {
    f.setup(['true'], UNSANDBOXED);
    const s = f.scenario('quick', { implement: [{ actions: [write('a.txt', 'a\n')] }] });
    const r0 = f.run(['job', 'do', '--title', 'done'], s);
    expect(r0.code, r0.stderr).toBe(0);
    const ws = f.show(jobIdFrom(r0.stderr)).workspace_path!;
    // Someone's shell (not the job's: no II_JOB_ID) working in the free workspace.
    const sleep = sleepOf();
    const bystander = spawn('/bin/sh', ['-c', `${sleep}; :`], { cwd: ws, stdio: 'ignore' });
    await waitFor(() => running(sleep), 'the bystander');
    const r = f.run(['workspace', 'prune']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`kept ${ws}: processes ${bystander.pid}, \\d+ still work in it`));
    expect(r.stdout).not.toContain(`removed ${ws}`);
    expect(existsSync(ws)).toBe(true);
    expect(f.workspaces().map((w) => w.path)).toEqual([ws]);
    expect(running(sleep)).toBe(true);

    bystander.kill('SIGKILL');
    for (const pid of runningWith(sleep)) process.kill(pid, 'SIGKILL');
    await waitFor(() => !running(sleep) && runningIn(ws).length === 0, 'the bystander to end');
    const again = f.run(['workspace', 'prune']);
    expect(again.stdout).toContain(`removed ${ws} (free)`);
    expect(existsSync(ws)).toBe(false);
  });
});
