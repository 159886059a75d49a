// currentRepo finds the work tree without spawning git in the plain case; it
// must name the same root git does from every kind of place, or jobs made
// from one folder would vanish from another.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { currentRepo } from '../../src/cli/context.js';
import { UserError } from '../../src/errors.js';
import { II } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('ii-repo-');
});
afterEach(() => {
  delete process.env.GIT_DIR;
  tmp.cleanup();
});

const gitTop = (cwd: string): string =>
  execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd, encoding: 'utf8' }).trim();

it('names the root git names: the checkout, a subfolder, a linked worktree, a symlinked path', () => {
  const repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
  const wt = join(tmp.path, 'wt');
  execFileSync('git', ['worktree', 'add', '-q', '--detach', wt], { cwd: repo });
  mkdirSync(join(wt, 'sub'));
  symlinkSync(repo, join(tmp.path, 'link'));
  const places = [repo, join(repo, 'src', 'deep'), wt, join(wt, 'sub'), join(tmp.path, 'link', 'src')];
  for (const cwd of places) {
    const r = currentRepo(cwd);
    expect(r.root, cwd).toBe(gitTop(cwd));
  }
  expect(currentRepo(join(repo, 'src')).slug).toBe(currentRepo(repo).slug);
  expect(currentRepo(wt).slug).not.toBe(currentRepo(repo).slug);
});

it('asks git when the environment changes how git finds repositories', () => {
  const repo = join(tmp.path, 'repo');
  const other = join(tmp.path, 'other');
  mkdirSync(repo);
  mkdirSync(other);
  gitRepo(repo);
  gitRepo(other);
  const sub = join(repo, 'src');
  mkdirSync(sub);
  process.env.GIT_DIR = join(other, '.git');
  // git, told GIT_DIR, takes the current folder as the work tree's top, where
  // looking for .git upwards would have found repo.
  expect(gitTop(sub)).toBe(sub);
  expect(currentRepo(sub).root).toBe(sub);
});

it('outside any repository: a clear error', () => {
  const plain = join(tmp.path, 'plain');
  mkdirSync(plain);
  expect(() => currentRepo(plain)).toThrow(UserError);
  expect(() => currentRepo(plain)).toThrow(/not inside a git repository/);
});

it('in a folder that was deleted: a clear error, not a crash', () => {
  const r = spawnSync(
    'sh',
    ['-c', 'mkdir gone && cd gone && rmdir ../gone && exec "$0" "$1" job list', process.execPath, II],
    { cwd: tmp.path, encoding: 'utf8', env: { ...process.env, XDG_STATE_HOME: join(tmp.path, 'state') } },
  );
  expect(r.stderr).toContain('the current folder no longer exists');
  expect(r.stderr).not.toContain('internal error');
  expect(r.status).toBe(2);
});
