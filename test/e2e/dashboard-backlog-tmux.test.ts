// The Must-show tmux test of issue [backlog]: in a real terminal over a real
// repository, a person writes a todo with `n`, starts it with `s`, then starts
// the backlog runner with `R` and watches the cards move as it runs the rest
// (todos written meanwhile by another process), changes its slots with `+`,
// and stops it with `R`. Every job is a real detached runner on the built-in
// scripted agent. Afterwards: every todo done, and nothing left running.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { runningIn } from '../helpers/procs.js';
import { hasTmux } from '../helpers/tmux.js';
import { tmuxJobs } from '../helpers/tmux-job.js';
import { waitFor } from '../helpers/tmp.js';

const tmuxed = tmuxJobs();

it.skipIf(!hasTmux)(
  'n writes a todo, s starts it, R runs the rest of the backlog while the cards move, + adds a slot, R stops it',
  async () => {
    const f = tmuxed.fixture('ii-dash-backlog-');
    f.setup();
    // Every todo plays its own copy of one short script: a file, a pause to
    // be seen running, then nothing more to change.
    const scenarios = join(f.tmp.path, 'scenarios');
    mkdirSync(scenarios);
    writeFileSync(
      join(scenarios, 'default.json'),
      JSON.stringify({
        implement: [
          {
            actions: [
              { type: 'write', path: 'work.txt', content: 'done\n' },
              { type: 'delay', ms: 1500 },
            ],
          },
          { actions: [] },
        ],
      }),
    );
    const env = { ...(f.env as Record<string, string>), NO_COLOR: '1', II_SCRIPTED_SCENARIO: scenarios };
    const todos = (status: string) =>
      JSON.parse(f.run(['todo', 'list', '--json', '--status', status]).stdout) as { id: string }[];

    const t = tmuxed.tmux(f.tmp.path);
    t.start([process.execPath, II, 'dashboard'], { cwd: f.repo, env, columns: 140, rows: 32 });
    await t.screenWith('incrementum · Jobs');

    // ── n: a todo written on the board ───────────────────────────────────
    t.send('n');
    await t.screenWith('new todo', 'title:');
    t.tmux('send-keys', '-t', 'main', '-l', 'Written on the board');
    t.send('Enter');
    await t.screenWith('type: task, bug, feature, chore');
    t.tmux('send-keys', '-t', 'main', '-l', 'feature');
    t.send('Enter');
    t.send('Enter');
    t.send('Enter');
    await t.screenWith('Backlog (1)', 'Written on the board', 'ready · p2 feature', 'run: off · 1 ready');

    // ── s: started now, in the background ───────────────────────────────
    t.send('s');
    await t.screenWith('starting a job for');
    await t.screenWith('Completed (1)', '1 done');
    expect(todos('done')).toHaveLength(1);

    // ── R: the backlog runner takes what another process writes ─────────
    for (const title of ['second', 'third', 'fourth', 'fifth'])
      execFileSync(process.execPath, [II, 'todo', 'create', '--title', `${title} from the CLI`], {
        cwd: f.repo,
        env: { ...process.env, ...env },
      });
    await t.screenWith('Backlog (4)', 'run: off · 4 ready · 0 blocked');
    t.send('R');
    await t.screenWith('backlog runner started with 2 slots');
    // Cards move: running ones in the stage columns, the header counting them against the slots.
    await t.screenWith('/2 slots');
    t.send('+');
    await t.screenWith('runner slots: 3');
    await t.screenWith('/3 slots');
    await t.screenWith('Completed (5)', '5 done');
    expect(todos('done')).toHaveLength(5);

    // ── R again: asked, then stopped ──────────────────────────────────────
    t.send('R');
    await t.screenWith('Stop the backlog runner');
    t.send('y');
    await t.screenWith('backlog runner stopping');
    // Gone from the header: no runner, and nothing left in the backlog to say.
    await waitFor(() => (t.capture().includes('slots') ? null : true), 'the runner to end');
    expect(
      JSON.parse(f.run(['job', 'list', '--all', '--json']).stdout).every(
        (j: { status: string }) => j.status === 'completed',
      ),
    ).toBe(true);
    t.send('q');
    expect(await t.exitStatus()).toBe(0);
    // Nothing of the jobs, the runner or the dashboard is left running.
    await waitFor(() => (runningIn(f.tmp.path).length === 0 ? true : null), 'every process to end');
  },
  180_000,
);
