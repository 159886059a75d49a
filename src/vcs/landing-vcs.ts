// The git steps of landing a job (src/land), as an interface: GitVcs
// implements it (in git-landing.ts), and landing gets it injected as jobs
// get Vcs, from the CLI's composition. The steps work on the target branch,
// the user's worktrees and a throwaway landing worktree; those in the
// landing worktree check its `.git` link first, as GitVcs does in a
// workspace: the project's tests ran there and may have repointed it.

import type { RemoteLandingVcs } from './remote-vcs.js';

/** An operation git has stopped in the middle of, on a branch. */
export type BusyState = 'rebase' | 'bisect' | 'am' | 'merge' | 'cherry-pick' | 'revert';

export interface BranchBusy {
  state: BusyState;
  /** The worktree it is in progress in. */
  worktree: string;
}

export type RebaseOutcome = { ok: true; head: string } | { ok: false; conflicts: string[]; detail: string };

export type FastForward = { ok: true } | { ok: false; moved: boolean; detail: string };

export interface LandingVcs extends RemoteLandingVcs {
  /** The full sha of a local branch's tip, or null when there is no such branch. */
  branchTip(root: string, branch: string): Promise<string | null>;
  /** The branch checked out in `checkout`, or null (detached HEAD). */
  currentBranch(checkout: string): Promise<string | null>;
  /** True when `ancestor` is `descendant` or one of its ancestors. */
  isAncestor(root: string, ancestor: string, descendant: string): Promise<boolean>;
  /** The commits base..head, oldest first. */
  commitsBetween(root: string, base: string, head: string): Promise<string[]>;
  /** The subjects of base..head, oldest first (a landing's confirmation names them). */
  commitSubjects(root: string, base: string, head: string): Promise<string[]>;
  /** The worktrees (the main checkout included) that have `branch` checked out. */
  checkoutsOf(root: string, branch: string): Promise<string[]>;
  /**
   * Whether `branch` is in the middle of a rebase, bisect, `git am`, merge,
   * cherry-pick or revert in any worktree (the main checkout included).
   */
  branchBusy(root: string, branch: string): Promise<BranchBusy | null>;

  /** A detached worktree at `rev` for landing, made afresh at `path`. */
  addLandingWorktree(root: string, path: string, rev: string): Promise<void>;
  removeLandingWorktree(root: string, path: string): Promise<void>;
  /**
   * Rebases base..head onto `onto` in the landing worktree `ws` (messages,
   * Change-Ids and authors kept). A conflict aborts the rebase and names the
   * files; with `keep`, the rebase is left stopped there for a person.
   */
  rebaseInWorktree(
    ws: string,
    onto: string,
    base: string,
    head: string,
    keep?: boolean,
  ): Promise<RebaseOutcome>;
  /** rebaseInWorktree taking the job's side of every conflicting hunk (`-X theirs`). */
  rebaseTakingJobSide(ws: string, onto: string, base: string, head: string): Promise<RebaseOutcome>;
  /** Goes on with a rebase a person resolved in `ws` (`git add`ed); a new conflict stops it again. */
  continueRebase(ws: string): Promise<RebaseOutcome>;
  /** Ends a rebase stopped in `ws`, as if it never began. */
  abortRebase(ws: string): Promise<void>;
  /** True while `ws` has a rebase stopped in it. */
  rebaseInProgress(ws: string): Promise<boolean>;

  /** Moves refs/heads/<branch> from `old` to `next` only if it is still at `old`. */
  casBranch(root: string, branch: string, next: string, old: string, reason: string): Promise<boolean>;
  /**
   * Fast-forwards the branch checked out in `checkout` from `old` to `next`
   * as `git merge --ff-only` does (refused, nothing changed, over a file with
   * uncommitted changes); `moved`: HEAD was no longer at `old`.
   */
  fastForwardCheckout(checkout: string, next: string, old: string): Promise<FastForward>;
  /** What `from..to` did to `file`, as a unified diff, at most `maxLines` lines (and whether it was cut). */
  fileDiff(
    root: string,
    from: string,
    to: string,
    file: string,
    maxLines: number,
  ): Promise<{ text: string; cut: boolean }>;
  /** Points `ref` at `commit`, so git keeps it. */
  keepRef(root: string, ref: string, commit: string): Promise<void>;
  /** Deletes a branch of ours that no worktree has checked out; false when git refused. */
  deleteBranch(root: string, branch: string): Promise<boolean>;
}
