// A workspace that can run the project's tests: `ii init` on a Node project
// with a real dependency writes its install step, and `ii job do` installs it
// in the job's workspace (npm ci, offline, from a tarball in the repo), or
// clones the checkout's node_modules when the lockfile matches. A project
// whose tests fail on the untouched base stops before any agent turn.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEvent } from '../../src/model/event.js';
import { readEvents } from '../../src/state/events.js';
import { ROOT } from '../helpers/cli.js';
import { JobFixture, jobIdFrom, promptsSent, verdict, write } from '../helpers/job.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let f: JobFixture;
afterEach(() => f?.cleanup());

const stateDir = () => join(f.env.XDG_STATE_HOME!, 'incrementum');
const events = (id: string): JobEvent[] => readEvents(stateDir(), id).values;
const ofType = (id: string, type: string) =>
  events(id).filter((e) => e.type === type) as (JobEvent & Record<string, unknown>)[];

/** npm without the network: the dependency is a tarball committed to the repo. */
const npmEnv = (home: string): NodeJS.ProcessEnv => ({
  npm_config_offline: 'true',
  npm_config_cache: join(home, 'npm-cache'),
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
});

let tarball = '';
const packs = tempDir('ii-pack-');
beforeAll(() => {
  // A real, tiny package from our own node_modules, packed as a registry would serve it.
  const out = execFileSync('npm', ['pack', '--silent', join(ROOT, 'node_modules', 'picocolors')], {
    cwd: packs.path,
    encoding: 'utf8',
    env: { ...process.env, ...npmEnv(packs.path) },
  });
  tarball = join(packs.path, out.trim().split('\n').at(-1)!);
  return () => packs.cleanup();
});

/**
 * A Node project whose test needs picocolors, with its lockfile committed and
 * node_modules ignored; `lockfile: false`: a library that keeps no lockfile
 * (.npmrc package-lock=false) and has picocolors as a devDependency.
 */
function nodeProject(o: { lockfile?: boolean } = {}): string {
  const lockfile = o.lockfile ?? true;
  const repo = join(f.tmp.path, 'repo');
  mkdirSync(join(repo, 'vendor'), { recursive: true });
  execFileSync('cp', [tarball, join(repo, 'vendor', 'picocolors.tgz')]);
  const files = {
    'package.json': JSON.stringify(
      {
        name: 'proj',
        version: '1.0.0',
        private: true,
        scripts: { test: 'node test.js' },
        [lockfile ? 'dependencies' : 'devDependencies']: { picocolors: 'file:vendor/picocolors.tgz' },
      },
      null,
      2,
    ),
    'test.js':
      "const pc = require('picocolors');\nif (typeof pc.red !== 'function') process.exit(1);\nconsole.log('ok');\n",
    '.gitignore': 'node_modules/\n',
    ...(lockfile ? {} : { '.npmrc': 'package-lock=false\n' }),
  };
  for (const [name, body] of Object.entries(files)) writeFileSync(join(repo, name), body);
  execFileSync('npm', ['install', '--silent'], { cwd: repo, env: { ...process.env, ...f.env } });
  gitRepo(repo, {});
  f.repo = repo;
  return repo;
}

describe('workspace setup', () => {
  it('ii init writes npm ci; the job installs it, then a second job clones the checkout node_modules', () => {
    f = new JobFixture('ii-setup-');
    Object.assign(f.env, npmEnv(f.tmp.path));
    const repo = nodeProject();
    const init = f.run(['init', '--agent', 'scripted']);
    expect(init.stdout).toMatch(/Workspace setup .*\n {2}npm ci: package-lock.json is committed at main\n/);
    const toml = readFileSync(join(repo, 'incrementum.toml'), 'utf8');
    expect(toml).toMatch(/setup = \["npm ci"\]/);
    expect(toml).toMatch(/test-commands = \["npm test"\]/);
    // Committed, so the job's workspace has it; the checkout's own install is gone.
    f.git('add', 'incrementum.toml');
    f.git('commit', '-qm', 'incrementum');
    rmSync(join(repo, 'node_modules'), { recursive: true });

    const s = f.scenario('s', { implement: [{ actions: [write('feature.txt', 'x\n')] }] });
    const first = f.run(['job', 'do', '--title', 'first'], s);
    expect(first.stderr).toMatch(/setup: npm ci/);
    expect(first.stderr).toContain('completed');
    expect(first.code).toBe(0);
    const id1 = jobIdFrom(first.stderr);
    expect(ofType(id1, 'setup_end')).toMatchObject([{ command: 'npm ci', exit_code: 0 }]);
    // The baseline and the iteration's tests both ran `npm test`, which needs picocolors.
    const ends = ofType(id1, 'test_end');
    expect(ends.map((e) => [e.command, e.exit_code, e.baseline ?? false])).toEqual([
      ['npm test', 0, true],
      ['npm test', 0, false],
    ]);

    // The user installs in the checkout: the next job clones it instead of running npm ci.
    execFileSync('npm', ['ci', '--silent'], { cwd: repo, env: { ...process.env, ...f.env } });
    const second = f.run(['job', 'do', '--title', 'second'], s);
    expect(second.stderr).toMatch(/setup: node_modules from the checkout instead of `npm ci`/);
    expect(second.stderr).toContain('completed');
    const id2 = jobIdFrom(second.stderr);
    expect(ofType(id2, 'setup_start')).toEqual([]);
    expect(ofType(id2, 'setup_reused')).toMatchObject([{ command: 'npm ci', dir: 'node_modules' }]);
    expect(ofType(id2, 'test_end').every((e) => e.exit_code === 0)).toBe(true);
    // The checkout's own copy is untouched.
    expect(existsSync(join(repo, 'node_modules', 'picocolors', 'package.json'))).toBe(true);
  }, 240_000); // two whole jobs and three npm installs, on a shared machine

  it('ii init on a project without a lockfile writes npm install; the job installs its devDependencies and commits no lockfile', () => {
    f = new JobFixture('ii-setup-');
    // As the user's shell has it: no NODE_ENV (vitest sets one for itself).
    Object.assign(f.env, npmEnv(f.tmp.path), { NODE_ENV: undefined });
    const repo = nodeProject({ lockfile: false });
    expect(existsSync(join(repo, 'package-lock.json'))).toBe(false);
    const init = f.run(['init', '--agent', 'scripted']);
    expect(init.stdout).toMatch(
      /Workspace setup .*\n {2}npm install --no-package-lock: package.json names dependencies and no lockfile is committed at main\n/,
    );
    expect(readFileSync(join(repo, 'incrementum.toml'), 'utf8')).toMatch(
      /setup = \["npm install --no-package-lock"\]/,
    );
    f.git('add', 'incrementum.toml');
    f.git('commit', '-qm', 'incrementum');
    rmSync(join(repo, 'node_modules'), { recursive: true });

    const s = f.scenario('s', { implement: [{ actions: [write('feature.txt', 'x\n')] }] });
    const r = f.run(['job', 'do', '--title', 'first'], s);
    expect(r.stderr).toMatch(/setup: npm install --no-package-lock/);
    expect(r.stderr).toContain('completed');
    const id = jobIdFrom(r.stderr);
    // The baseline's `npm test` needs the devDependency.
    expect(ofType(id, 'test_end').map((e) => [e.command, e.exit_code])).toEqual([
      ['npm test', 0],
      ['npm test', 0],
    ]);
    // stdout is the final commit: it holds the agent's file and no package-lock.json.
    const files = execFileSync('git', ['show', '--name-only', '--format=', r.stdout.trim()], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(files.trim().split('\n')).toEqual(['feature.txt']);
  }, 120_000); // a job and an npm install, on a shared machine

  it('a failing setup ends the job at once, with the output tail in the reason and no agent turn', () => {
    f = new JobFixture('ii-setup-');
    f.setup(['true'], {});
    writeFileSync(
      join(f.repo, 'incrementum.toml'),
      readFileSync(join(f.repo, 'incrementum.toml'), 'utf8') +
        '\n[workspace]\nsetup = ["echo cannot reach the registry >&2; exit 7"]\n',
    );
    f.git('commit', '-qam', 'setup');
    const r = f.run(['job', 'do', '--title', 't']);
    expect(r.code).toBe(1);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(
      /^the workspace setup failed: `echo .*` exited 7:\ncannot reach the registry\n/,
    );
    expect(job.failure_reason).toMatch(/ii doctor --tests/);
    expect(job.agent_sessions).toEqual([]);
  });

  it('runs setup again before the tests when the agent changed a lockfile', () => {
    f = new JobFixture('ii-setup-');
    const runs = join(f.tmp.path, 'setup-runs');
    f.setup(['true'], {});
    writeFileSync(
      join(f.repo, 'incrementum.toml'),
      readFileSync(join(f.repo, 'incrementum.toml'), 'utf8') +
        `\n[workspace]\nsetup = [${JSON.stringify(`echo run >> ${runs}`)}]\n` +
        // (the sandbox lets the setup count its runs outside the workspace because it says so)
        `\n[sandbox]\nwritable = ["${f.tmp.path}"]\n`,
    );
    f.git('commit', '-qam', 'setup');
    const s = f.scenario('s', {
      implement: [
        { actions: [write('requirements.txt', 'requests==2\n')] },
        { actions: [write('b.txt', 'b\n')] },
      ],
    });
    const r = f.run(['job', 'do', '--title', 't'], s);
    expect(r.stderr).toContain('completed');
    // Once before the first prompt, once after the lockfile appeared; not for the second change.
    expect(readFileSync(runs, 'utf8')).toBe('run\nrun\n');
  });
});

describe('baseline tests', () => {
  it('tests failing on the untouched base stop the job with their output, before any agent turn', () => {
    f = new JobFixture('ii-baseline-');
    f.setup(['echo "1 test failed: parse" >&2; exit 1']);
    const r = f.run(['job', 'do', '--title', 't']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the tests fail before any change/);
    // The reason's lines stay lines on the terminal, not an escaped \n run.
    expect(r.stderr).toMatch(/^1 test failed: parse$/m);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(
      /^the tests fail before any change: `echo .*` exited 1\n1 test failed: parse\n/,
    );
    expect(job.failure_reason).toMatch(/--allow-failing-baseline/);
    // ii job show prints the reason's lines as lines, under its first one.
    const shown = f.run(['job', 'show', job.id]).stdout;
    expect(shown).toMatch(
      /^ {2}reason: {4}the tests fail before any change: `echo .*` exited 1\n {13}1 test failed: parse$/m,
    );
    // Zero agent turns: no agent session was recorded and no transcript written.
    expect(job.agent_sessions).toEqual([]);
    const transcripts = join(stateDir(), 'jobs', job.id, 'transcripts');
    expect(existsSync(transcripts) ? readdirSync(transcripts) : []).toEqual([]);
  });

  it('--allow-failing-baseline goes on, and the review is told which tests were already failing', () => {
    f = new JobFixture('ii-baseline-');
    f.setup(['test -f README.md', 'exit 3']);
    const s = f.scenario('s', {
      implement: [{ actions: [write('a.txt', 'a\n')] }],
      review: [verdict('ACCEPT', 'fine')],
    });
    const r = f.run(['job', 'do', '--title', 't', '--allow-failing-baseline'], s);
    expect(r.stderr).toContain('completed');
    const job = f.show(jobIdFrom(r.stderr));
    const review = job.agent_sessions.find((a) => a.purpose === 'review')!;
    const prompt = promptsSent(review.transcript).join('\n');
    expect(prompt).toMatch(/Tests that already failed before this job/);
    expect(prompt).toContain('- `exit 3` (exit 3)');
    expect(prompt).not.toContain('`test -f README.md`');
  });

  it('[job] baseline-tests = false skips it', () => {
    f = new JobFixture('ii-baseline-');
    f.setup(['test -f a.txt'], { job: 'baseline-tests = false\n' });
    const s = f.scenario('s', { implement: [{ actions: [write('a.txt', 'a\n')] }] });
    const r = f.run(['job', 'do', '--title', 't'], s);
    expect(r.stderr).toContain('completed');
  });
});
