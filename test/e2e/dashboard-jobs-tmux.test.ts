// The Must-show end-to-end test of issue 7, with real jobs: ii dashboard in a
// real terminal (tmux) over a real repository, while `ii job do` runs in
// other processes on the built-in scripted agent (the real ACP wire, real
// test commands, real git worktrees). One job's card moves through the
// columns and its iteration history is drilled into; a second job, whose
// agent is stuck in a long turn, is abandoned from the board (its runner
// honours the control request) and retried from it (a detached runner whose
// card appears and completes). Then q, exit status 0, and no process left.
//
// The first job's agent holds each stage it must be seen in on a gate file
// that the test creates only once the board shows the card there, so no
// stage can pass unseen, however slow or loaded the machine.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { II, ii } from '../helpers/cli.js';
import { write, type JobJson } from '../helpers/job.js';
import { isRunning, runningIn, runningInGroup } from '../helpers/procs.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { shortJobId } from '../../src/model/job-id.js';
import { testEnv } from '../helpers/env.js';

const cleanups: (() => void)[] = [];
afterEach(() =>
  cleanups
    .splice(0)
    .reverse()
    .forEach((c) => c()),
);

/** Kills, by process group, whatever still runs in `dir` (a failed test's jobs and agents). */
function killAllIn(dir: string): void {
  for (const pid of runningIn(dir)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

it.skipIf(!hasTmux)(
  'follows real jobs: card through the columns, iteration history, abandon and retry from the board',
  async () => {
    const tmp = tempDir('ii-dash-jobs-');
    cleanups.push(tmp.cleanup);
    const gates = join(tmp.path, 'gates');
    mkdirSync(gates);
    const open = (name: string) => writeFileSync(join(gates, name), '');
    // Last in, first out: the gates open (a stuck agent lets go), then everything left is killed.
    cleanups.push(() => killAllIn(tmp.path));
    cleanups.push(() => ['implement', 'review'].forEach(open));

    // A tiny project whose test command passes, on the scripted agent.
    const repo = join(tmp.path, 'repo');
    mkdirSync(repo);
    gitRepo(repo, {
      'greet.sh': 'echo "hello, $1"\n',
      'incrementum.toml':
        '[agent]\npreset = "scripted"\n\n[job]\n' +
        'test-commands = ["sh greet.sh world | grep -q \'hello, world\'"]\nauto-commit = false\n',
    });
    const env: Record<string, string> = testEnv(tmp.path, {
      NO_COLOR: '1',
    });
    const run = (...args: string[]) => {
      const r = ii(args, { cwd: repo, env });
      if (r.code !== 0) throw new Error(`ii ${args.join(' ')}: ${r.stderr}`);
      return r.stdout.trim();
    };
    const show = (id: string) => JSON.parse(run('job', 'show', id, '--json')) as JobJson;
    const scenario = (name: string, s: unknown) => {
      const p = join(tmp.path, `${name}.json`);
      writeFileSync(p, JSON.stringify(s));
      return p;
    };
    // The agent waits in its turn until the test opens the gate.
    const gate = (name: string) => ({
      type: 'shell',
      command: `while [ ! -e '${join(gates, name)}' ]; do sleep 0.05; done`,
    });

    // The first job: held in implementing, then in its first review (which
    // asks for changes), then a second iteration is accepted.
    const first = scenario('first', {
      implement: [
        { actions: [gate('implement'), write('greet.sh', 'echo "hello, $1!"\n')] },
        { actions: [write('greet.sh', 'echo "hello, ${1:-you}!"\n')] },
      ],
      review: [
        {
          actions: [
            gate('review'),
            { type: 'feedback', verdict: 'REQUEST_CHANGES', text: 'Greet someone when no name is given.' },
          ],
        },
        { actions: [{ type: 'feedback', verdict: 'ACCEPT', text: 'Good.' }] },
      ],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'greet: a default name' }] }],
    });
    // The second job's agent is busy in one long turn until it is stopped.
    const stuck = scenario('stuck', { implement: [{ actions: [{ type: 'delay', ms: 300_000 }] }] });
    // Its retry is started by the dashboard, with the dashboard's environment:
    // the scenario it names is the retry's.
    const retry = scenario('retry', {
      implement: [{ actions: [write('NOTES.md', 'greet.sh greets.\n')] }],
    });

    const todo1 = run('todo', 'create', '--title', 'first todo: a default name');
    const todo2 = run('todo', 'create', '--title', 'second todo: notes');

    const jobs: ChildProcess[] = [];
    cleanups.push(() => jobs.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));
    const jobDo = (todo: string, scenarioPath: string) => {
      const child = spawn(process.execPath, [II, 'job', 'do', todo], {
        cwd: repo,
        env: { ...process.env, ...env, II_SCRIPTED_SCENARIO: scenarioPath },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      jobs.push(child);
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const exit = new Promise<number | null>((res) => child.on('close', res));
      const id = waitFor(() => /job ([0-9a-f]+) for todo/.exec(stderr)?.[1], `the job id of ${todo}`);
      return { exit, id };
    };

    const t = new Tmux(tmp.path);
    cleanups.push(() => t.kill());
    t.start([process.execPath, II, 'dashboard'], {
      cwd: repo,
      columns: 140,
      rows: 32,
      env: { ...env, II_SCRIPTED_SCENARIO: retry, CI: 'true', PATH: process.env.PATH ?? '' },
    });
    await t.screenWith('incrementum · Jobs', '0 active, 0 done');
    const pane = Number(t.get('#{pane_pid}'));

    // ── The first job moves through the columns ──────────────────────────
    const job1 = jobDo(todo1, first);
    const id1 = await job1.id;
    await t.screenWith(shortJobId(id1), 'Implementing (1)', 'implementing');
    open('implement');
    // Tested, then held in review: the card is in Reviewing with its first iteration.
    await t.screenWith('Reviewing (1)', 'reviewing · c1 i1');
    open('review');
    await t.screenWith('Completed (1)', '1 done');
    expect(await job1.exit).toBe(0);

    // ── Its changes, the change's iteration history, one commit ──────────
    const done = show(id1);
    expect(done.status).toBe('completed');
    const commits = done.changes[0]!.commits;
    expect(commits.map((c) => c.review?.outcome)).toEqual(['REQUEST_CHANGES', 'ACCEPT']);
    // The cursor opened on the second todo, waiting in the Backlog column at the left.
    await t.screenWith('Backlog (1)', 'second todo: notes');
    t.send('Right');
    t.send('Enter');
    await t.screenWith(`job ${shortJobId(id1)}`, 'Committed (1)', '2 iter · review ACCEPT');
    t.send('Enter');
    await t.screenWith('change 1', 'Rejected (1)', 'Accepted (1)', commits[0]!.commit_id.slice(0, 7));
    // The cursor is on the rejected first iteration: its detail has the review that asked for more.
    t.send('Enter');
    await t.screenWith('iteration 1', 'draft message:', 'REQUEST_CHANGES', 'Greet someone when no name');
    t.send('Escape');
    await t.screenWith('Rejected (1)', 'Accepted (1)');
    t.send('Escape');
    await t.screenWith('Committed (1)');
    t.send('Escape');
    await t.screenWith('incrementum · Jobs', 'Completed (1)');

    // ── A second job, stuck in a long turn, abandoned from the board ─────
    const job2 = jobDo(todo2, stuck);
    const id2 = await job2.id;
    await t.screenWith(shortJobId(id2), 'Implementing (1)', '1 active');
    // Select its card: the live pane names the selected active job.
    t.send('h');
    await t.screenWith(`live: ${shortJobId(id2)}`);
    t.send('a');
    await t.screenWith(`Abandon job ${shortJobId(id2)}?`);
    t.send('y');
    await t.screenWith('Abandoned (1)', '0 active', '1 abandoned');
    expect(await job2.exit).toBe(1);
    expect(show(id2).status).toBe('abandoned');

    // ── Retried from the board: a new job for the same todo runs to the end ─
    // The cursor stayed on the abandoned card.
    t.send('r');
    await t.screenWith(`Retry job ${shortJobId(id2)} as a new job?`);
    t.send('y');
    const retrying = await t.screenWith(`retrying ${shortJobId(id2)} in the background`);
    const retryPid = Number(/\(pid (\d+)\)/.exec(retrying)?.[1]);
    expect(retryPid).toBeGreaterThan(0);
    await t.screenWith('Completed (2)', '2 done', 'Abandoned (1)');
    const all = JSON.parse(run('job', 'list', '--json', '--all')) as {
      id: string;
      todo_id: string;
      status: string;
      retried_from: string | null;
    }[];
    const again = all.find((j) => j.retried_from === id2);
    expect(again).toMatchObject({ todo_id: todo2, status: 'completed' });
    await t.screenWith(shortJobId(again!.id));
    await waitFor(() => !isRunning(retryPid), 'the retry runner to exit');

    // ── Quit: exit status 0, nothing left running ─────────────────────────
    t.send('q');
    expect(await t.exitStatus()).toBe(0);
    // The dashboard's process group (the pane's), the job runners, the detached
    // retry's group, and anything working in the test's dirs (agents, tests).
    const pids = [pane, retryPid, ...jobs.map((c) => c.pid!)];
    await waitFor(
      () =>
        pids.every((p) => !isRunning(p) && runningInGroup(p).length === 0) &&
        runningIn(tmp.path).length === 0,
      'no process left behind',
    );
  },
  // Each step waits at most 20 s for its frame; the whole is ~10 s on an idle machine.
  120_000,
);
