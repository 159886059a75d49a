// What every command needs: the repository it runs in and the open store.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UserError } from '../errors.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { sharedIdentity } from '../state/identity.js';
import { repoSlug } from '../state/index.js';
import { openAsyncStateStore } from '../state/open-async.js';
import { configuredStoreUrl } from '../state/store-url.js';
import { repoRootSync } from '../vcs/git-run.js';

export interface RepoContext {
  root: string;
  /**
   * The repository's name in the store: its clone's path (repoSlug) on the
   * local SQLite store; on a shared PostgreSQL store what all its clones
   * share ([state] project, else the remote's URL: state/identity.ts).
   */
  slug: string;
}

/** The repository's name in the store this process uses (see RepoContext.slug). */
function storeSlug(root: string): string {
  return configuredStoreUrl() ? sharedIdentity(root).slug : repoSlug(root);
}

/** Environment that changes how git finds a repository: with any of it set, only git answers. */
const GIT_DISCOVERY_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
];

/**
 * The top of the work tree holding `cwd`, found as git finds it in the plain
 * case: the nearest folder with a `.git` directory (holding HEAD) or a
 * `.git` file (a linked worktree's `gitdir:` pointer). null when unsure, to
 * ask git. Spawning git is a fifth of a short command's time (ii job list).
 */
function findWorkTree(cwd: string): string | null {
  if (GIT_DISCOVERY_ENV.some((k) => process.env[k])) return null;
  let dir: string;
  try {
    dir = realpathSync(cwd);
  } catch {
    return null;
  }
  for (;;) {
    const dotGit = join(dir, '.git');
    try {
      const st = statSync(dotGit);
      if (st.isDirectory()) return existsSync(join(dotGit, 'HEAD')) ? dir : null;
      if (st.isFile()) return readFileSync(dotGit, 'utf8').startsWith('gitdir:') ? dir : null;
      return null;
    } catch {
      // no .git here: look further up
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** process.cwd(), or a clear error when the folder the shell is in was deleted. */
export function workingDir(): string {
  try {
    return process.cwd();
  } catch {
    throw new UserError(
      'the current folder no longer exists (deleted or moved): cd into your repository and run this again.',
    );
  }
}

/** The git repository containing `cwd`: the same root (and slug) from any subfolder. */
export function currentRepo(cwd = workingDir()): RepoContext {
  const found = findWorkTree(cwd);
  if (found) return { root: found, slug: storeSlug(found) };
  let root: string | null;
  try {
    root = repoRootSync(cwd);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new UserError('git is not installed or not on PATH; incrementum needs git.');
    throw err;
  }
  if (!root)
    throw new UserError(
      `not inside a git repository: ${cwd}\nRun ii from a git checkout (git init makes one).`,
    );
  return { root, slug: storeSlug(root) };
}

/**
 * Opens the store of record (PostgreSQL with II_DATABASE_URL, else the local
 * SQLite file: state/open-async.ts), runs `fn`, and always closes the store.
 */
export async function withStore<T>(
  fn: (store: AsyncStateStore) => T | Promise<T>,
  opts: { integrityCheck?: boolean; reserve?: boolean; mapped?: boolean } = {},
): Promise<T> {
  const store = await openAsyncStateStore(opts);
  // A shared store is the record of each job's log too: the events a command
  // appends here (a landing, an abandon, a dead runner's cleanup) go to it,
  // sent before the store closes (log-shipping.ts). Loaded only then: a
  // local store's commands do without it.
  const shipping =
    store.driver === 'postgres' ? (await import('./job/log-shipping.js')).mirrorJobLogs(store) : null;
  try {
    return await fn(store);
  } finally {
    await shipping?.close();
    await store.close();
  }
}
