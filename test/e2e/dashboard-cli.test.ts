import { existsSync } from 'node:fs';
import { join } from 'node:path';
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

it('ii dashboard with a shared PostgreSQL store is not refused for it: without a terminal it asks for one, before any store is opened', () => {
  const repo = tempDir();
  const state = tempDir();
  dirs.push(repo, state);
  gitRepo(repo.path);
  // No server is asked: the terminal check comes first (port 1 answers nothing).
  const url = 'postgres://ii:hunter2@127.0.0.1:1/incrementum';
  const r = ii(['dashboard'], { cwd: repo.path, env: { XDG_STATE_HOME: state.path, II_DATABASE_URL: url } });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('needs a terminal');
  expect(r.stderr).not.toContain('does not read a shared');
  expect(r.stderr + r.stdout).not.toContain('hunter2');
  expect(existsSync(join(state.path, 'incrementum', 'state.db'))).toBe(false);
});
