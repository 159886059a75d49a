// What every command needs: the repository it runs in and the open store.
import { execFileSync } from 'node:child_process';
import { UserError } from '../errors.js';
import { openStateStore, repoSlug, type StateStore } from '../state/index.js';

export interface RepoContext {
  root: string;
  slug: string;
}

/** The git repository containing `cwd`: the same root (and slug) from any subfolder. */
export function currentRepo(cwd = process.cwd()): RepoContext {
  let root: string;
  try {
    root = execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT')
      throw new UserError('git is not installed or not on PATH; incrementum needs git.');
    throw new UserError(
      `not inside a git repository: ${cwd}\nRun ii from a git checkout (git init makes one).`,
    );
  }
  return { root, slug: repoSlug(root) };
}

/** Opens the store, runs `fn`, and always closes the store. */
export async function withStore<T>(fn: (store: StateStore) => T | Promise<T>): Promise<T> {
  const store = openStateStore();
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}
