// The git steps that carry a job's commits between machines through a remote
// (issue 31): pushing a job's refs under refs/incrementum/, fetching them
// where a diff or landing lacks them, and a landing's push of its target
// branch by compare-and-swap. GitVcs implements them (git-remote.ts); they
// are part of Vcs and LandingVcs, so callers get them as they get the rest.
import type { RemoteSpec } from '../model/remote.js';
import type { GitGroupRecorder } from './git-run.js';

/** For a runner's push: the job's cancel ends it, and its group is recorded for the job (a runner killed outright). */
export interface PushControl {
  signal?: AbortSignal;
  record?: { recorder: GitGroupRecorder; label: string };
}

/** A push or fetch that did not happen: what git said, any URL's credentials redacted. */
export type RemoteOutcome = { ok: true } | { ok: false; detail: string };

export interface RemoteVcs {
  /**
   * Pushes every ref of the changes `changeIds` (base, iterations, head:
   * refs/incrementum/changes/<id>/*) to the same names on the remote, in one
   * `git push --atomic --no-verify`. Forced in that namespace only: a
   * change's head is rewritten by each iteration. Never throws for what the
   * remote or the network did.
   */
  pushChangeRefs(
    root: string,
    remote: RemoteSpec,
    changeIds: readonly string[],
    control?: PushControl,
  ): Promise<RemoteOutcome>;
  /** Which of `commits` (full shas) the repository at `root` has no commit for. */
  missingCommits(root: string, commits: readonly string[]): Promise<string[]>;
  /** Fetches the changes' refs (refs/incrementum/changes/<id>/*) from the remote, and nothing else. */
  fetchChangeRefs(root: string, remote: RemoteSpec, changeIds: readonly string[]): Promise<RemoteOutcome>;
}

/** Where the remote's branch is: its sha, null when it has no such branch; or why it could not be asked. */
export type RemoteTip = { ok: true; sha: string | null } | { ok: false; detail: string };

/** A push with a lease: `lost` when the remote's branch was no longer where the lease expected it. */
export type LeasePush = { ok: true } | { ok: false; lost: boolean; detail: string };

export interface RemoteLandingVcs {
  /** The sha of refs/heads/<branch> on the remote (`git ls-remote`). */
  remoteBranchTip(root: string, remote: RemoteSpec, branch: string): Promise<RemoteTip>;
  /**
   * Sets the remote's refs/heads/<branch> to `commit` (null: deletes it) only
   * if it is still at `expected` (null: only if it has none), as
   * `--force-with-lease=refs/heads/<branch>:<expected>` does: compare-and-swap,
   * never a plain force. The user's pre-push hook runs (it is their branch): a
   * hook that refuses is `{ ok: false, lost: false }` with what it said.
   */
  pushBranchWithLease(
    root: string,
    remote: RemoteSpec,
    branch: string,
    commit: string | null,
    expected: string | null,
  ): Promise<LeasePush>;
}
