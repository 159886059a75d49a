// The README's quick start, as a newcomer runs it: a fresh clone of this
// repository, a temporary HOME, `npm install`, then `npx ii demo` with no
// terminal. Every demo job must reach the final state its scenario is for,
// and the demo must leave nothing behind outside its temp dir.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let clone: string;
let env: NodeJS.ProcessEnv;

/** The README's two commands, read from its quick start so the test follows what it says. */
function quickStartCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .flatMap((l) => l.replace(/#.*$/, '').split('&&'))
    .map((c) => c.trim())
    .filter(Boolean);
}

beforeAll(() => {
  tmp = tempDir('ii-quickstart-');
  clone = join(tmp.path, 'incrementum');
  // Committed files only, as a user's clone has.
  execFileSync('git', ['clone', '-q', ROOT, clone]);
  const home = join(tmp.path, 'home');
  env = {
    PATH: process.env.PATH,
    HOME: home,
    CI: 'true',
    NO_COLOR: '1',
    // The registry cache is the machine's (a fresh HOME would download everything again).
    npm_config_cache: process.env.npm_config_cache || join(homedir(), '.npm'),
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    GIT_AUTHOR_NAME: 'newcomer',
    GIT_AUTHOR_EMAIL: 'newcomer@example.com',
    GIT_COMMITTER_NAME: 'newcomer',
    GIT_COMMITTER_EMAIL: 'newcomer@example.com',
  };
}, 120_000);
afterAll(() => tmp?.cleanup());

describe('the README quick start in a fresh clone', () => {
  it('names an install command and ii demo', () => {
    const cmds = quickStartCommands();
    expect(cmds[0]).toMatch(/^npm (install|ci)/);
    expect(cmds).toContain('npx ii demo');
  });

  it('installs and runs the demo to the expected final states, leaving nothing behind', () => {
    // The demo's temp dirs go to a private TMPDIR: other test runs on this
    // machine make ii-demo-* dirs in the shared one while this one runs.
    const demoTmp = join(tmp.path, 'tmp');
    mkdirSync(demoTmp);
    const [install] = quickStartCommands();
    const i = spawnSync('sh', ['-c', `${install} --prefer-offline`], {
      cwd: clone,
      env,
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(i.status, i.stderr).toBe(0);
    expect(existsSync(join(clone, 'dist', 'cli', 'main.js'))).toBe(true);

    const d = spawnSync('npx', ['ii', 'demo'], {
      cwd: clone,
      env: { ...env, TMPDIR: demoTmp },
      encoding: 'utf8',
      timeout: 240_000,
    });
    const out = d.stdout + d.stderr;
    expect(out).toContain('scripted agent');
    expect(out).toContain('each job took the path it shows (✓), the abandoned one too:');
    // No hint to land work in a repository the demo then removes.
    expect(out).not.toContain('ii job land');
    expect(out).toMatch(/✓ \[1\] .*: completed/);
    expect(out).toMatch(/✓ \[2\] .*: completed/);
    expect(out).toMatch(/✓ \[3\] .*: completed/);
    expect(out).toMatch(/✓ \[4\] .*: abandoned/);
    expect(out).toContain('tests failed');
    expect(out).toContain('REQUEST_CHANGES');
    expect(d.status, out).toBe(0);
    expect(readdirSync(demoTmp).filter((n) => n.startsWith('ii-'))).toEqual([]);
    // Nothing written to the user's own state or config.
    expect(existsSync(join(env.HOME!, '.local', 'state', 'incrementum'))).toBe(false);
  }, 600_000);
});
