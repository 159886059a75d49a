// The guards GitVcs keeps around the commands that move a workspace's
// branch: the workspace's HEAD and branch files read without git (an agent
// can rewrite both), a stale ref lock a killed git left, and the lock races
// of concurrent `worktree add`s.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isWorkspaceBranch } from '../model/workspace-branch.js';
import { GitError } from './git-run.js';

/**
 * Git errors another git process causes for a moment: a lock file it holds,
 * or (seen with 8 concurrent `worktree add`) the half-written entry of a
 * worktree it is creating, which this one reads while checking where a
 * branch is checked out ("failed to read .git/worktrees/3/commondir").
 */
const RETRYABLE = /\.lock\b|lock file|failed to read .*worktrees\//i;

/** A HEAD or ref file git wrote is one short line; anything longer is not one. */
const MAX_REF_FILE = 4096;
const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

/**
 * A HEAD or loose ref file the agent can rewrite, read without following a
 * symbolic link (unless `follow`) or waiting: null unless it is a regular file of at most
 * MAX_REF_FILE bytes. readFileSync would block the whole process on a FIFO
 * (git never makes one) and read /dev/zero until memory runs out.
 */
export function readRefFile(p: string, follow = false): string | null {
  let fd: number;
  try {
    fd = openSync(p, O_RDONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_REF_FILE) return null;
    const buf = Buffer.alloc(MAX_REF_FILE + 1);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return n > MAX_REF_FILE ? null : buf.toString('utf8', 0, n).trim();
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The workspace's HEAD file and its branch's ref file, read without git
 * (null when the workspace is not a linked worktree). A worktree's HEAD and
 * its branch's folder are writable inside the sandbox: an agent can make
 * either a symbolic ref to another branch (`ref: refs/heads/main`), and git
 * outside, moving HEAD for the runner, would move that branch.
 */
export function headFiles(ws: string): {
  head: string | null;
  branchFile: (branch: string) => string | null;
  dropBranchLink: (branch: string) => boolean;
} | null {
  const read = readRefFile;
  // The link as git follows it (a .git that is a symbolic link is refused
  // by the link check before any git runs; read through here as before).
  const link = /^gitdir: (.+)$/m.exec(readRefFile(join(ws, '.git'), true) ?? '')?.[1];
  if (!link) return null;
  const admin = resolve(ws, link);
  const common = read(join(admin, 'commondir'));
  if (!common) return null;
  const commonDir = resolve(admin, common);
  // A branch file that is a symbolic link is a symbolic ref to git (the link
  // names the ref: `work -> refs/heads/main`), and moving HEAD moved main;
  // read through, the link named no file and passed for a plain ref.
  const branchFile = (b: string): string | null => {
    const p = join(commonDir, 'refs', 'heads', b);
    try {
      if (lstatSync(p).isSymbolicLink()) return 'ref: (a symbolic link)';
    } catch {
      return null;
    }
    return read(p);
  };
  // Removes the branch file when it is a symbolic link (the link itself, never
  // what it names): the link check refuses git there while it is one, so git
  // cannot drop it.
  const dropBranchLink = (b: string): boolean => {
    const p = join(commonDir, 'refs', 'heads', b);
    try {
      if (!lstatSync(p).isSymbolicLink()) return false;
      rmSync(p);
      return true;
    } catch {
      return false;
    }
  };
  return { head: read(join(admin, 'HEAD')), branchFile, dropBranchLink };
}

/** How old a workspace branch's ref lock must be to be taken for one a killed git left. */
export const STALE_REF_LOCK_MS = 5_000;

/**
 * Runs `fn` (which moves workspace branch `branch`) and, when it fails on
 * that branch's ref lock, waits for the lock to go (a live git holds one for
 * milliseconds) or to be STALE_REF_LOCK_MS old, when it is removed, and runs
 * `fn` once more. The caller holds the workspace (claimed, nothing working
 * in it), so nothing else moves its branch: a lock that stays is one a git
 * killed mid-update left (a runner SIGKILLed as it made the workspace or
 * committed), and git would refuse the branch for good ("Unable to create
 * '….lock': File exists"). Failing at once on a young one failed the next
 * job on that workspace, and spent an attempt of its todo, whenever it came
 * within STALE_REF_LOCK_MS of the kill (ii run's chaos test, seen in CI).
 */
export async function withStaleBranchLock<T>(branch: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!isWorkspaceBranch(branch) || !(err instanceof GitError)) throw err;
    const lock = /Unable to create '([^']+\.lock)': File exists/.exec(err.result.stderr)?.[1];
    if (!lock || !lock.endsWith(`/refs/heads/${branch}.lock`)) throw err;
    // Bounded: a lock made again and again (no git of ours would) leaves the error standing.
    const until = Date.now() + 2 * STALE_REF_LOCK_MS;
    for (;;) {
      let age: number;
      try {
        age = Date.now() - statSync(lock).mtimeMs;
      } catch {
        return fn(); // gone: the git that held it has finished
      }
      if (age >= STALE_REF_LOCK_MS) {
        rmSync(lock, { force: true });
        return fn();
      }
      if (Date.now() >= until) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Retries a git command that lost such a race. */
export async function withLockRetry<T>(fn: () => Promise<T>, tries = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= tries || !(err instanceof GitError) || !RETRYABLE.test(err.result.stderr)) throw err;
      await new Promise((r) => setTimeout(r, 50 * i));
    }
  }
}
