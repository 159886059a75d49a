// A project whose own setup or tests leave files git does not ignore (a
// package packed without its .gitignore: node_modules/, coverage/): a job
// would commit them as the agent's work, change after change, until
// max-changes. It stops before any agent turn instead, saying which files
// and what to do, and ii doctor --tests says the same.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ii } from '../helpers/cli.js';
import { jobIdFrom, type JobJson } from '../helpers/job.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';
import { testEnv } from '../helpers/env.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;

function setup(tests: string[], gitignore?: string) {
  repo = join(tmp.path, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  gitRepo(repo, {
    'README.md': '# r\n',
    ...(gitignore ? { '.gitignore': gitignore } : {}),
    'incrementum.toml':
      `[agent]\npreset = "scripted"\n\n[workspace]\nsetup = ["mkdir -p deps && echo d > deps/lib.js"]\n\n` +
      `[job]\ntest-commands = ${JSON.stringify(tests)}\n`,
  });
}

beforeEach(() => {
  tmp = tempDir('ii-leftovers-');
  env = testEnv(tmp.path);
});
afterEach(() => tmp.cleanup());

describe('files the setup and tests leave that git does not ignore', () => {
  const TESTS = ['mkdir -p coverage && echo 1 > coverage/report.txt && echo x >> README.md'];

  it('fail the job before any agent turn, naming them and what to do; ii doctor --tests says so too', () => {
    setup(TESTS);
    const r = ii(['job', 'do', '--title', 'anything'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(1);
    const job = JSON.parse(
      ii(['job', 'show', jobIdFrom(r.stderr), '--json'], { cwd: repo, env }).stdout,
    ) as JobJson;
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toContain('leave files git does not ignore: README.md, coverage/, deps/');
    expect(job.failure_reason).toContain('Add them to .gitignore');
    expect(job.failure_reason).toContain('No agent turn was spent');
    expect(job.agent_sessions).toEqual([]);
    expect(job.changes).toEqual([]);

    const doctor = ii(['doctor', '--tests'], { cwd: repo, env });
    expect(doctor.code).not.toBe(0);
    expect(doctor.stdout + doctor.stderr).toContain(
      'setup and tests leave files git does not ignore: README.md, coverage/, deps/',
    );
  });

  it('ignored by the project: the job runs as usual', () => {
    setup(['mkdir -p coverage && echo 1 > coverage/report.txt'], 'coverage/\ndeps/\n');
    const r = ii(['job', 'do', '--title', 'anything'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    const doctor = ii(['doctor', '--tests'], { cwd: repo, env });
    expect(doctor.stdout + doctor.stderr).not.toContain('does not ignore');
  });
});
