import { afterEach, expect, it } from 'vitest';
import { ii } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const dirs: { cleanup: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.cleanup()));

it('ii dashboard without a terminal says to use ii job list', () => {
  const repo = tempDir();
  const state = tempDir();
  dirs.push(repo, state);
  gitRepo(repo.path);
  const r = ii(['dashboard'], { cwd: repo.path, env: { XDG_STATE_HOME: state.path } });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('needs a terminal');
  expect(r.stderr).toContain('ii job list');
  expect(r.stdout).toBe('');
});

it('plain ii without a terminal prints help rather than opening the dashboard', () => {
  const repo = tempDir();
  const state = tempDir();
  dirs.push(repo, state);
  gitRepo(repo.path);
  const r = ii([], { cwd: repo.path, env: { XDG_STATE_HOME: state.path } });
  expect(r.stderr + r.stdout).not.toContain('needs a terminal');
});
