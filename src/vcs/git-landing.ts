// The git steps of landing a job (src/land/landing.ts): GitVcs's side as a
// LandingVcs (landing-vcs.ts), which is how the rest of incrementum reaches
// them. See whether the target branch is busy (a rebase, bisect, am or merge
// in progress in a worktree), rebase the job's commits in a throwaway
// worktree, and move the target branch only by compare-and-swap, or, where
// the branch is checked out, only as `git merge --ff-only` would (which
// never touches a file with uncommitted changes). Git-only, like the rest of
// src/vcs. The landing worktree runs the project's tests, which can rewrite
// its `.git`: each git command there checks the link first
// (worktree-link.ts), as GitVcs does.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { git, gitRaw, type GitOptions } from './git-run.js';
import type { BranchBusy, BusyState, FastForward, RebaseOutcome } from './landing-vcs.js';
import { WorkspaceRedirected, WorktreeLinks } from './worktree-link.js';
import { revArg } from './rev-arg.js';

const links = new WorktreeLinks();
/** Options for a git command in the landing worktree `ws`: its link is checked just before git starts. */
const inWs = (ws: string, o: GitOptions = {}): GitOptions => ({ ...o, before: () => links.check(ws) });

const FALLBACK_IDENT = {
  GIT_AUTHOR_NAME: 'incrementum',
  GIT_AUTHOR_EMAIL: 'incrementum@localhost',
  GIT_COMMITTER_NAME: 'incrementum',
  GIT_COMMITTER_EMAIL: 'incrementum@localhost',
};

/** The full sha of a local branch's tip, or null when there is no such branch. */
export async function branchTip(root: string, branch: string): Promise<string | null> {
  const r = await gitRaw(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The branch checked out in `checkout`, or null (detached HEAD). */
export async function currentBranch(checkout: string): Promise<string | null> {
  const r = await gitRaw(checkout, ['symbolic-ref', '-q', '--short', 'HEAD']);
  return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null;
}

/** True when `ancestor` is `descendant` or one of its ancestors. */
export async function isAncestor(root: string, ancestor: string, descendant: string): Promise<boolean> {
  return (
    (await gitRaw(root, ['merge-base', '--is-ancestor', revArg(ancestor), revArg(descendant)])).code === 0
  );
}

/** The commits base..head, oldest first. */
export async function commitsBetween(root: string, base: string, head: string): Promise<string[]> {
  return (await git(root, ['rev-list', '--reverse', `${revArg(base)}..${revArg(head)}`]))
    .split('\n')
    .filter(Boolean);
}

/** The subjects of base..head, oldest first (a landing's confirmation names them). */
export async function commitSubjects(root: string, base: string, head: string): Promise<string[]> {
  const out = await git(root, ['log', '--reverse', '--format=%s', `${revArg(base)}..${revArg(head)}`]);
  return out.split('\n').filter(Boolean);
}

/** The worktrees (the main checkout included) that have `branch` checked out. */
export async function checkoutsOf(root: string, branch: string): Promise<string[]> {
  const out = await git(root, ['worktree', 'list', '--porcelain']);
  const paths: string[] = [];
  let path = '';
  for (const line of out.split('\n')) {
    if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
    else if (line === `branch refs/heads/${branch}`) paths.push(path);
  }
  return paths;
}

/**
 * Whether `branch` is in the middle of a rebase, bisect, `git am`, merge,
 * cherry-pick or revert in any worktree (the main checkout included), as
 * git's own `branch -f` checks: a rebase or bisect detaches HEAD, so the
 * branch is not "checked out" then, and moving it under them is lost when
 * they finish or abort (a rebase resets it to where it began).
 */
export async function branchBusy(root: string, branch: string): Promise<BranchBusy | null> {
  const ref = `refs/heads/${branch}`;
  for (const w of await worktrees(root)) {
    const attached = w.branch === ref;
    // A worktree on another branch can only be busy with that branch.
    if (!attached && !w.detached) continue;
    if (!existsSync(w.path)) continue;
    const dir = await gitDirOf(w.path);
    if (!dir) continue;
    const state = stateIn(dir, branch, attached);
    if (state) return { state, worktree: w.path };
  }
  return null;
}

/**
 * A worktree's own git dir: its .git directory, or where its .git file
 * points (a linked worktree), read as git reads it; git is asked only when
 * neither is there. A file read, not a process per worktree: a landing
 * looks twice.
 */
async function gitDirOf(worktree: string): Promise<string | null> {
  const dotGit = join(worktree, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
    const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
    if (m) return resolve(worktree, m[1]!.trim());
  } catch {
    // No .git here (GIT_DIR elsewhere, core.worktree): git knows.
  }
  const r = await gitRaw(worktree, ['rev-parse', '--absolute-git-dir']);
  return r.code === 0 ? r.stdout.trim() : null;
}

function stateIn(dir: string, branch: string, attached: boolean): BusyState | null {
  const read = (name: string): string | null => {
    try {
      return readFileSync(join(dir, name), 'utf8').trim();
    } catch {
      return null;
    }
  };
  const named = (v: string | null) => v === branch || v === `refs/heads/${branch}`;
  // git am keeps its state in rebase-apply too, marked by `applying`, on the
  // branch checked out; a rebase names the branch it rewrites in head-name.
  if (existsSync(join(dir, 'rebase-apply', 'applying'))) {
    if (attached) return 'am';
  } else if (named(read('rebase-merge/head-name')) || named(read('rebase-apply/head-name'))) return 'rebase';
  // BISECT_START holds the branch the bisect began on (a sha when detached).
  const bisect = read('BISECT_START');
  if (bisect !== null && (named(bisect) || attached)) return 'bisect';
  if (!attached) return null;
  if (existsSync(join(dir, 'MERGE_HEAD'))) return 'merge';
  if (existsSync(join(dir, 'CHERRY_PICK_HEAD'))) return 'cherry-pick';
  if (existsSync(join(dir, 'REVERT_HEAD'))) return 'revert';
  return null;
}

/** Every worktree of the repository with what it has checked out. */
async function worktrees(
  root: string,
): Promise<{ path: string; branch: string | null; detached: boolean }[]> {
  const out = await git(root, ['worktree', 'list', '--porcelain']);
  const all: { path: string; branch: string | null; detached: boolean }[] = [];
  for (const line of out.split('\n')) {
    if (line.startsWith('worktree '))
      all.push({ path: line.slice('worktree '.length), branch: null, detached: false });
    else if (line.startsWith('branch ') && all.length) all.at(-1)!.branch = line.slice('branch '.length);
    else if (line === 'detached' && all.length) all.at(-1)!.detached = true;
  }
  return all;
}

/** A detached worktree at `rev` for landing, made afresh at `path`. */
export async function addLandingWorktree(root: string, path: string, rev: string): Promise<void> {
  await removeLandingWorktree(root, path);
  mkdirSync(dirname(path), { recursive: true });
  await git(root, ['worktree', 'add', '--quiet', '--force', '--detach', path, revArg(rev)]);
  links.check(path);
}

export async function removeLandingWorktree(root: string, path: string): Promise<void> {
  if (existsSync(path)) {
    const r = await gitRaw(root, ['worktree', 'remove', '--force', '--force', path]);
    if (r.code !== 0 && existsSync(path)) rmSync(path, { recursive: true, force: true });
  }
  await gitRaw(root, ['worktree', 'prune']);
  links.forget(path);
}

/**
 * Rebases base..head onto `onto` in the landing worktree `ws` (each commit's
 * message, Change-Id trailer included, and author kept). A conflict aborts
 * the rebase, so the worktree is never left half-rebased, and names the
 * files; with `keep`, the rebase is left stopped there for a person.
 */
export async function rebaseInWorktree(
  ws: string,
  onto: string,
  base: string,
  head: string,
  keep = false,
): Promise<RebaseOutcome> {
  await git(ws, ['checkout', '--quiet', '--force', '--detach', revArg(head)], inWs(ws));
  const r = await gitRaw(
    ws,
    // No hooks of the user's run on our rewrite; commits that become empty
    // (already on the target) are dropped, as a rebase does by default.
    [
      '-c',
      'core.hooksPath=/dev/null',
      'rebase',
      '--quiet',
      '--no-autostash',
      '--onto',
      revArg(onto),
      revArg(base),
    ],
    inWs(ws, { env: await identity(ws) }),
  );
  return rebaseStep(ws, r, keep);
}

/**
 * Goes on with a rebase a person resolved in `ws` (`git add`ed): the next
 * commits are replayed, and a new conflict stops it again, named.
 */
export async function continueRebase(ws: string): Promise<RebaseOutcome> {
  const left = await unmergedFiles(ws);
  if (left.length) return { ok: false, conflicts: left, detail: 'unresolved' };
  const r = await gitRaw(
    ws,
    ['-c', 'core.hooksPath=/dev/null', 'rebase', '--continue'],
    // The commit keeps its message (Change-Id and all): no editor opens.
    inWs(ws, { env: { ...(await identity(ws)), GIT_EDITOR: 'true' } }),
  );
  return rebaseStep(ws, r, true);
}

/** Ends a rebase stopped in `ws`, as if it never began. */
export async function abortRebase(ws: string): Promise<void> {
  await gitRaw(ws, ['rebase', '--abort'], inWs(ws));
}

/** True while `ws` has a rebase stopped in it. */
export async function rebaseInProgress(ws: string): Promise<boolean> {
  if (!existsSync(ws)) return false;
  for (const dir of ['rebase-merge', 'rebase-apply']) {
    // A worktree whose link was repointed holds no rebase of ours: its callers remove it.
    const r = await gitRaw(ws, ['rev-parse', '--git-path', dir], inWs(ws)).catch((err: unknown) => {
      if (err instanceof WorkspaceRedirected) return null;
      throw err;
    });
    if (!r) return false;
    if (r.code === 0 && existsSync(resolve(ws, r.stdout.trim()))) return true;
  }
  return false;
}

async function unmergedFiles(ws: string): Promise<string[]> {
  const r = await gitRaw(ws, ['diff', '--name-only', '--diff-filter=U', '-z'], inWs(ws));
  return [...new Set(r.stdout.split('\0').filter(Boolean))];
}

async function identity(ws: string): Promise<NodeJS.ProcessEnv> {
  return (await gitRaw(ws, ['var', 'GIT_COMMITTER_IDENT'], inWs(ws))).code === 0 ? {} : FALLBACK_IDENT;
}

async function rebaseStep(
  ws: string,
  r: { code: number; stdout: string; stderr: string },
  keep: boolean,
): Promise<RebaseOutcome> {
  if (r.code === 0) return { ok: true, head: await git(ws, ['rev-parse', '--verify', 'HEAD'], inWs(ws)) };
  const conflicts = await unmergedFiles(ws);
  if (!keep || !conflicts.length) await abortRebase(ws);
  return { ok: false, conflicts, detail: (r.stderr || r.stdout).trim() };
}

/** Moves refs/heads/<branch> from `old` to `next` only if it is still at `old`. */
export async function casBranch(
  root: string,
  branch: string,
  next: string,
  old: string,
  reason: string,
): Promise<boolean> {
  const r = await gitRaw(root, ['update-ref', '-m', reason, `refs/heads/${branch}`, next, old]);
  return r.code === 0;
}

/**
 * Fast-forwards the branch checked out in `checkout` from `old` to `next`
 * with `git merge --ff-only`, which refuses (and changes nothing) when a file
 * it would update has uncommitted changes or an untracked file is in the way.
 * `moved`: HEAD was no longer at `old`, nothing was tried.
 */
export async function fastForwardCheckout(checkout: string, next: string, old: string): Promise<FastForward> {
  const head = await gitRaw(checkout, ['rev-parse', '--verify', 'HEAD']);
  if (head.stdout.trim() !== old) return { ok: false, moved: true, detail: '' };
  const r = await gitRaw(checkout, ['merge', '--ff-only', '--quiet', '--no-edit', revArg(next)]);
  if (r.code === 0) return { ok: true };
  return { ok: false, moved: false, detail: (r.stderr || r.stdout).trim() };
}

/**
 * Rebases base..head onto `onto` in `ws` taking the job's side of every
 * conflicting hunk (`-X theirs`: in a rebase, "theirs" is the commit being
 * replayed), so each commit keeps its message and Change-Id and no file
 * holds conflict markers; the target's side of those hunks is then the
 * agent's to bring back. A conflict no hunk choice settles (a file deleted
 * on one side, say) fails, and the rebase is undone.
 */
export async function rebaseTakingJobSide(
  ws: string,
  onto: string,
  base: string,
  head: string,
): Promise<RebaseOutcome> {
  await git(ws, ['checkout', '--quiet', '--force', '--detach', revArg(head)], inWs(ws));
  const r = await gitRaw(
    ws,
    [
      '-c',
      'core.hooksPath=/dev/null',
      'rebase',
      '--quiet',
      '--no-autostash',
      '-X',
      'theirs',
      '--onto',
      revArg(onto),
      revArg(base),
    ],
    inWs(ws, { env: await identity(ws) }),
  );
  return rebaseStep(ws, r, false);
}

/** What `from..to` did to `file`, as a unified diff, at most `maxLines` lines (and whether it was cut). */
export async function fileDiff(
  root: string,
  from: string,
  to: string,
  file: string,
  maxLines: number,
): Promise<{ text: string; cut: boolean }> {
  const r = await gitRaw(root, ['diff', '--no-color', '--no-ext-diff', revArg(from), revArg(to), '--', file]);
  const lines = r.stdout.split('\n');
  if (lines.length <= maxLines) return { text: r.stdout.trimEnd(), cut: false };
  return { text: lines.slice(0, maxLines).join('\n'), cut: true };
}

/** Points `ref` at `commit`, so git keeps it. */
export async function keepRef(root: string, ref: string, commit: string): Promise<void> {
  await git(root, ['update-ref', ref, commit]);
}

/** Deletes a branch of ours that no worktree has checked out; false when git refused. */
export async function deleteBranch(root: string, branch: string): Promise<boolean> {
  return (await gitRaw(root, ['branch', '-q', '-D', branch])).code === 0;
}
