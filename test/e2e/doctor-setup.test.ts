// ii doctor on a setup that cannot work in a workspace: what a failing
// command said first is shown with its end, and a frozen install whose
// lockfile a fresh checkout of the base would not have is a finding before
// anything runs (and ii job do and ii run refuse to start on it).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ii } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  tmp = tempDir();
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: join(tmp.path, 'home') };
});
afterEach(() => tmp.cleanup());

const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
const toml = (setup: string[], tests = ['true']) =>
  `[agent]\npreset = "scripted"\n[job]\ntest-commands = ${JSON.stringify(tests)}\n` +
  `[workspace]\nsetup = ${JSON.stringify(setup)}\n`;
/** A command that says why it fails first, then pages of usage text, as `npm ci` does. */
const chatty = (why: string) =>
  `echo "${why}" >&2; i=1; while [ $i -le 80 ]; do echo "usage line $i" >&2; i=$((i+1)); done; echo "see the log" >&2; exit 1`;

describe('ii doctor --tests on a failing command', () => {
  it("shows the setup command's first lines and its last, the ones between counted", () => {
    writeFileSync(join(repo, 'incrementum.toml'), toml([chatty('can only install with a lockfile')]));
    git('add', '-A');
    git('commit', '-qm', 'config');
    const r = ii(['doctor', '--tests'], { cwd: repo, env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL setup\s+`echo .*` exited 1:\n\s+can only install with a lockfile\n/);
    expect(r.stdout).toMatch(/usage line 7\n\s+… 62 lines not shown …\n\s+usage line 70\n/);
    expect(r.stdout).toMatch(/usage line 80\n\s+see the log\n/);
  });

  it('and the same for a failing test command', () => {
    writeFileSync(join(repo, 'incrementum.toml'), toml([], [chatty('3 tests failed: see below')]));
    git('add', '-A');
    git('commit', '-qm', 'config');
    const r = ii(['doctor', '--tests'], { cwd: repo, env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAIL tests\s+fail on [0-9a-f]{10}, before any change: `echo .*` exited 1:\n\s+3 tests failed: see below\n/,
    );
    expect(r.stdout).toMatch(/… 62 lines not shown …\n(\s+usage line \d+\n){11}\s+see the log\n/);
  });
});

/** npm kept off the network and out of the user's cache. */
const npmEnv = (): NodeJS.ProcessEnv => ({
  npm_config_offline: 'true',
  npm_config_cache: join(tmp.path, 'npm-cache'),
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
});

describe('ii doctor on a setup whose input a workspace would not have', () => {
  it("`npm ci` with the lockfile .gitignore keeps out of the commits: a config finding, not 'ok config'", () => {
    // A real npm package, as a newcomer's had it: its lockfile ignored by `*-lock.*`.
    mkdirSync(join(repo, 'vendor', 'left'), { recursive: true });
    writeFileSync(join(repo, 'vendor', 'left', 'package.json'), '{"name":"left","version":"1.0.0"}\n');
    writeFileSync(join(repo, 'vendor', 'left', 'index.js'), 'module.exports = (s, n) => s.padStart(n);\n');
    writeFileSync(
      join(repo, 'package.json'),
      JSON.stringify({
        name: 'pkg',
        version: '1.0.0',
        scripts: { test: 'node test.js' },
        dependencies: { left: 'file:./vendor/left' },
      }),
    );
    writeFileSync(join(repo, 'test.js'), 'if (require("left")("a", 3) !== "  a") process.exit(1);\n');
    writeFileSync(join(repo, '.gitignore'), 'node_modules/\n*-lock.*\n');
    const npm = { ...env, ...npmEnv() };
    execFileSync('npm', ['install', '--silent'], { cwd: repo, env: { ...process.env, ...npm } });
    expect(readFileSync(join(repo, 'package-lock.json'), 'utf8')).toContain('"left"');
    git('add', '-A');
    git('commit', '-qm', 'package');
    expect(git('ls-files')).not.toContain('package-lock.json');

    // ii init does not guess `npm ci` from it...
    const init = ii(['init', '--agent', 'scripted'], { cwd: repo, env: npm });
    expect(init.stdout).toContain('  npm install --no-package-lock: package.json names dependencies');
    expect(readFileSync(join(repo, 'incrementum.toml'), 'utf8')).toMatch(
      /^setup = \["npm install --no-package-lock"\]$/m,
    );
    // ...and ii doctor says what is wrong with a config that does.
    const npmCi = toml(['npm ci'], ['npm test']) + 'reuse = "off"\n';
    writeFileSync(join(repo, 'incrementum.toml'), npmCi);
    git('add', '-A');
    git('commit', '-qm', 'config');
    const r = ii(['doctor', '--tests'], { cwd: repo, env: npm });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toMatch(/ok\s+config/);
    expect(r.stdout).toMatch(
      /FAIL config\s+\[workspace\] setup `npm ci` needs package-lock.json or npm-shrinkwrap.json, and a fresh checkout of main has neither: every job would fail at setup/,
    );
    expect(r.stdout).toContain(
      'package-lock.json is in this checkout but not committed (`*-lock.*` in .gitignore:2 ignores it)',
    );
    expect(r.stdout).toMatch(
      /→ Commit package-lock.json \(git add -f package-lock.json.*or set \[workspace\] setup to `npm install --no-package-lock`/,
    );
    // One cause, one finding: --tests does not run the setup to fail again.
    expect(r.stdout).not.toMatch(/(ok|FAIL) setup/);
    expect(r.stdout).toContain('1 problem to fix.');

    // Copied in by [workspace] copy, the workspace has it: a real `npm ci` there passes.
    writeFileSync(join(repo, 'incrementum.toml'), npmCi + 'copy = ["package-lock.json"]\n');
    git('commit', '-qam', 'copy the lockfile');
    const copied = ii(['doctor', '--tests'], { cwd: repo, env: npm });
    expect(copied.stdout).toMatch(/ok\s+config\s+test commands: npm test; setup: npm ci/);
    expect(copied.stdout).toMatch(/ok\s+setup\s+ran npm ci/);
    expect(copied.stdout).toMatch(/ok\s+tests\s+pass on/);
    expect(copied.code, copied.stdout).toBe(0);

    // Committed, it is the base's own.
    writeFileSync(join(repo, 'incrementum.toml'), npmCi);
    git('add', '-f', 'package-lock.json');
    git('commit', '-qam', 'commit the lockfile');
    expect(ii(['doctor'], { cwd: repo, env: npm }).stdout).toMatch(
      /ok\s+config\s+test commands: npm test; setup: npm ci/,
    );
  }, 120_000);

  it("a yarn.lock that was never committed: the same finding, naming yarn's own way out", () => {
    writeFileSync(join(repo, 'yarn.lock'), '');
    writeFileSync(join(repo, 'incrementum.toml'), toml(['yarn install --frozen-lockfile']));
    git('add', 'incrementum.toml');
    git('commit', '-qm', 'config');
    const r = ii(['doctor', '--json'], { cwd: repo, env });
    const config = (
      JSON.parse(r.stdout) as { name: string; ok: boolean; detail: string; fix: string }[]
    ).find((c) => c.name === 'config');
    expect(config).toMatchObject({ ok: false });
    expect(config?.detail).toContain(
      '`yarn install --frozen-lockfile` needs yarn.lock, and a fresh checkout of main does not have it',
    );
    expect(config?.detail).toContain('yarn.lock is in this checkout but not committed');
    expect(config?.fix).toBe(
      'Commit yarn.lock (git add yarn.lock && git commit), or set [workspace] setup to `yarn install` in incrementum.toml.',
    );

    // ii job do and ii run refuse to start on it, before any todo or job is
    // made: each job would fail at setup, spending one of its todo's attempts.
    const refusal =
      /`yarn install --frozen-lockfile` needs yarn.lock, and a fresh checkout of main does not have it[^]*Commit yarn.lock/;
    const jobDo = ii(['job', 'do', '--title', 'x'], { cwd: repo, env });
    expect(jobDo.code).toBe(2);
    expect(jobDo.stderr).toMatch(refusal);
    expect(JSON.parse(ii(['todo', 'list', '--json'], { cwd: repo, env }).stdout)).toEqual([]);
    ii(['todo', 'create', '--title', 'y'], { cwd: repo, env });
    const run = ii(['run'], { cwd: repo, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(refusal);
    expect(JSON.parse(ii(['job', 'list', '--all', '--json'], { cwd: repo, env }).stdout)).toEqual([]);
  });
});
