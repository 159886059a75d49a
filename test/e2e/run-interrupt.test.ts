// ii run's two Ctrl-Cs when a job runner has started but not yet claimed its
// todo: the second Ctrl-C must still abandon that job once it exists, or it
// runs on after ii run said it abandoned "the jobs this run started".
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { II, ii, ROOT } from '../helpers/cli.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { runningIn } from '../helpers/procs.js';
import { testEnv } from '../helpers/env.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  tmp = tempDir('ii-run-int-');
  repo = join(tmp.path, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  gitRepo(repo, {
    'README.md': '# r\n',
    'incrementum.toml': `[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f README.md"]\n`,
  });
  env = testEnv(tmp.path);
});
afterEach(() => tmp.cleanup());

describe('ii run interrupted twice', () => {
  it('abandons a job whose runner was still starting when the second Ctrl-C came', async () => {
    // The agent works for a minute: only an abandon ends the job before that.
    const scenarios = join(tmp.path, 'scenarios');
    mkdirSync(scenarios);
    writeFileSync(
      join(scenarios, 'default.json'),
      JSON.stringify({ implement: [{ actions: [{ type: 'delay', ms: 60_000 }] }, { actions: [] }] }),
    );
    env = { ...env, II_SCRIPTED_SCENARIO: scenarios };
    const run = (args: string[]) => ii(args, { cwd: repo, env });
    const todo = run(['todo', 'create', '--title', 'Held at its claim']).stdout.trim();
    const gate = join(tmp.path, 'gate');
    const preload = pathToFileURL(join(ROOT, 'test', 'fixtures', 'claim-gate.mjs')).href;
    const c = spawn(process.execPath, [II, 'run', '--jobs', '1'], {
      cwd: repo,
      env: {
        ...process.env,
        NO_COLOR: '1',
        ...env,
        II_TEST_CLAIM_GATE: gate,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${preload}`.trim(),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((res) => c.on('exit', res));
    try {
      await waitFor(() => stderr.includes(`${todo} `) || null, 'the job runner to start', 60_000);
      c.kill('SIGINT');
      await waitFor(() => stderr.includes('1 starting') || null, 'the first Ctrl-C to be taken');
      c.kill('SIGINT');
      await waitFor(
        () => stderr.includes('still starting: each is asked to abandon as soon as its job exists') || null,
        'the second Ctrl-C to be taken',
      );
      // Only now may the runner claim its todo and make its job.
      writeFileSync(gate, '');
      expect(await exited, stderr).toBe(1);
      const jobs = JSON.parse(run(['job', 'list', '--all', '--json']).stdout) as {
        status: string;
        failure_reason: string | null;
      }[];
      expect(jobs, stderr).toHaveLength(1);
      expect(jobs[0]!.status, stderr).toBe('abandoned');
      expect(jobs[0]!.failure_reason).toMatch(/interrupted twice/);
      expect(stderr).toMatch(/asked to abandon as it started/);
      await waitFor(
        () => (runningIn(tmp.path).length === 0 ? true : null),
        'no process left in the test dir',
      );
    } finally {
      writeFileSync(gate, '');
      if (c.exitCode === null) c.kill('SIGKILL');
    }
  }, 180_000);
});
