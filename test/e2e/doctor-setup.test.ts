// ii doctor on a setup that cannot work in a workspace: what a failing
// command said first is shown with its end, and a frozen install whose
// lockfile a fresh checkout of the base would not have is a finding before
// anything runs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
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
