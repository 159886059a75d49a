// An agent that cannot reach its model logs why on stderr and says nothing
// over ACP: the board at 80×24 (tmux, a real `ii job do` on the scripted
// agent) shows its stderr lines in the live pane as they come, then, after
// 30 s of nothing, that the agent has been quiet. Before, the pane showed
// only "● agent: implement" while the error sat in the agent's own log.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { runningIn } from '../helpers/procs.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { testEnv } from '../helpers/env.js';

const cleanups: (() => void)[] = [];
afterEach(() =>
  cleanups
    .splice(0)
    .reverse()
    .forEach((c) => c()),
);

it.skipIf(!hasTmux)(
  "shows a quiet agent's stderr lines in the live pane, then how long it has said nothing",
  async () => {
    const tmp = tempDir('ii-dash-quiet-');
    cleanups.push(tmp.cleanup);
    cleanups.push(() => {
      for (const pid of runningIn(tmp.path))
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
    });
    const repo = join(tmp.path, 'repo');
    mkdirSync(repo);
    gitRepo(repo, {
      'README.md': '# r\n',
      'incrementum.toml': '[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["true"]\n',
    });
    const env: Record<string, string> = testEnv(tmp.path, {
      NO_COLOR: '1',
    });
    const scenario = join(tmp.path, 'unreachable.json');
    writeFileSync(
      scenario,
      JSON.stringify({
        implement: [
          {
            actions: [
              { type: 'stderr', text: 'model unreachable: ECONNREFUSED' },
              { type: 'stderr', text: 'retrying in 30 s (attempt 2)' },
              { type: 'delay', ms: 300_000 },
            ],
          },
        ],
      }),
    );

    const t = new Tmux(tmp.path);
    cleanups.push(() => t.kill());
    t.start([process.execPath, II, 'dashboard'], {
      cwd: repo,
      columns: 80,
      rows: 24,
      env: { ...env, CI: 'true', PATH: process.env.PATH ?? '' },
    });
    await t.screenWith('incrementum');

    const job = spawn(process.execPath, [II, 'job', 'do', '--title', 'unreachable model'], {
      cwd: repo,
      env: { ...process.env, ...env, II_SCRIPTED_SCENARIO: scenario },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    job.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((res) => job.on('close', res));
    cleanups.push(() => job.exitCode === null && job.kill('SIGKILL'));

    // Each line as the agent writes it, while its turn goes on.
    await t.screenWith('stderr: model unreachable: ECONNREFUSED', 'stderr: retrying in 30 s (attempt 2)');
    // Then the clock: 30 s on, the pane says the agent has been quiet (real time, so a generous bound).
    const quiet = await waitFor(
      () => /no output from the agent for \d+ s/.exec(t.capture())?.[0],
      `the pane to say the agent is quiet; screen:\n${t.capture()}`,
      120_000,
      250,
    );
    expect(Number(/for (\d+) s/.exec(quiet)![1])).toBeGreaterThanOrEqual(30);
    console.log(t.capture());
    expect(t.capture()).toContain('stderr: retrying in 30 s (attempt 2)');

    job.kill('SIGTERM');
    await exited;
    expect(stderr).toMatch(/job [0-9a-f]+ for todo/);
    t.send('q');
    expect(await t.exitStatus()).toBe(0);
    await waitFor(() => runningIn(tmp.path).length === 0 || null, 'nothing left running', 20_000);
  },
  240_000,
);
