// The version-control surface the rest of incrementum uses. Shaped so jj maps
// onto it one to one later: a workspace is a jj workspace, a change id is jj's
// change id, commitIteration is "snapshot the working copy into the change",
// describe is `jj describe`. Only git is implemented (jj cannot be installed here).
import type { CappedDiff, DiffLimits } from './capped-diff.js';
import type { RemoteVcs } from './remote-vcs.js';

/** The runner's own protocol files: never committed, never in a file list. */
export const PROTOCOL_FILES = ['.incrementum-feedback', '.incrementum-commit-message'] as const;

export interface FileStat {
  /** Relative to the workspace root, forward slashes. */
  path: string;
  status: 'added' | 'modified' | 'removed';
  additions: number;
  deletions: number;
}

export interface LogEntry {
  sha: string;
  /** Committer time, seconds since the epoch. */
  time: number;
  subject: string;
}

export interface IterationCommit {
  commit_id: string;
  change_id: string;
  /** Files of this iteration against the previous iteration (or the base for the first). */
  files: FileStat[];
}

/** Where a job starts: the commit, and what it was taken from. */
export interface Base {
  /** The commit, a full sha. */
  sha: string;
  /** What it was resolved from, to show: the checked-out branch, the --rev given, or HEAD (detached). */
  ref: string;
  /** The local branch whose tip it is (where a landing goes by default); null for a tag, a sha, a remote ref, a detached HEAD. */
  branch: string | null;
}

/**
 * The working copy as stageWorkingCopy staged it: its tree, and HEAD then.
 * A commitIteration given it records that tree (no staging of its own),
 * moving HEAD only from `head`; HEAD moved since, it stages again.
 */
export interface StagedCopy {
  readonly ws: string;
  /** The tree differs from HEAD's, protocol files aside. */
  readonly changed: boolean;
  readonly tree: string;
  readonly head: string;
}

export interface Vcs extends RemoteVcs {
  /** The repository root containing `cwd`; UserError when there is none. */
  root(cwd: string): Promise<string>;
  /**
   * The base revision: `rev` when given, else the branch checked out in
   * `root` (its HEAD's commit when detached), never a remote-tracking ref
   * unless `rev` names one. UserError for an unknown rev, a repo with no
   * commits, or a checked-out branch with none.
   */
  resolveBase(root: string, rev?: string): Promise<Base>;

  /**
   * Which of `paths` (relative to the root) a checkout of `rev` has; its
   * top-level entries when `paths` is not given. What a fresh workspace
   * holds, unlike the user's checkout, which may have files git ignores.
   */
  filesAt(root: string, rev: string, paths?: readonly string[]): Promise<string[]>;
  /** The text of `path` at `rev`, or null when `rev` has no such file. */
  readFileAt(root: string, rev: string, path: string): Promise<string | null>;
  /** The ignore rule ("`*-lock.*` in .gitignore:3") that ignores each of `paths` in `root`; the others are left out. */
  ignoreRules(root: string, paths: readonly string[]): Promise<Map<string, string>>;

  /** Creates a worktree at `path` on `branch`, checked out at `baseRev`. */
  addWorkspace(root: string, path: string, branch: string, baseRev: string): Promise<void>;
  /** Makes a released workspace clean again and checks out `baseRev` (reuse). */
  resetWorkspace(path: string, branch: string, baseRev: string): Promise<void>;
  removeWorkspace(root: string, path: string): Promise<void>;
  /** Moves the worktree at `from` to `to` (which must not exist), its registration in `root` with it. */
  moveWorkspace(root: string, from: string, to: string): Promise<void>;
  /**
   * Ends what this Vcs keeps running for the workspace `path` (its
   * long-lived git processes) when a job is done with it; what it is asked
   * next starts them again.
   */
  release(path: string): void;
  /**
   * Starts what this Vcs keeps running for the workspace `ws` before it is
   * first asked (a job's agent is starting meanwhile), so the first change's
   * HEAD read and ref write wait for no git start. Changes nothing.
   */
  warm?(ws: string): Promise<void>;

  head(ws: string): Promise<string>;
  /** True when the working copy differs from HEAD, protocol files aside. */
  hasChanges(ws: string): Promise<boolean>;
  /**
   * hasChanges' answer from the work commitIteration does anyway: stages the
   * whole working copy (protocol files aside) and writes it as a tree, which
   * `changed` compares with HEAD's. Handed to the commitIteration that
   * follows, it saves staging again. Unlike hasChanges it leaves the index
   * staged: for the runner's own check after an agent's turn, not for a
   * check an agent's own commit may follow.
   */
  stageWorkingCopy(ws: string): Promise<StagedCopy>;
  /**
   * What the workspace holds that git would commit, untracked folders as one
   * entry (`node_modules/`): protocol files left out.
   */
  uncommittedPaths(ws: string): Promise<string[]>;
  /**
   * Starts a change on top of HEAD (its base ref, and the workspace's
   * current change) and returns its stable change id: `id` when given (a
   * change already on a job's record), else a new one. `base`: HEAD's
   * commit, when the caller has just read it (saves reading it again).
   */
  startChange(ws: string, id?: string, base?: string): Promise<string>;
  /** The change id of the change being worked on, or null before the first. */
  currentChangeId(ws: string): Promise<string | null>;
  /**
   * Records the working copy (protocol files aside) as the change's new
   * commit, replacing its previous commit on the workspace branch; the
   * previous iteration stays reachable under refs/incrementum/.
   */
  commitIteration(ws: string, message: string, staged?: StagedCopy): Promise<IterationCommit>;
  /** Sets the final message of the current change's commit (Change-Id kept); returns the new sha. */
  describe(ws: string, message: string): Promise<string>;

  /** Files added / modified / removed between two commits, with +/-. */
  changedFiles(ws: string, from: string, to: string): Promise<FileStat[]>;
  /**
   * Unified diff between two commits for a person to read: streamed, cut to
   * `limits` (capped-diff.ts DISPLAY_LIMITS by default) with what was left out said.
   */
  diff(ws: string, from: string, to: string, limits?: DiffLimits): Promise<CappedDiff>;
  /** `git log --format=%H|%ct|%s base..head`, oldest first. */
  log(ws: string, base: string, head: string): Promise<LogEntry[]>;
  /**
   * Deletes the refs (base, iterations, head) of every change in the
   * repository at `root` whose id `recorded()` lacks, and returns those ids.
   * `recorded` is called after the refs are listed.
   */
  pruneChangeRefs(
    root: string,
    recorded: () => ReadonlySet<string> | Promise<ReadonlySet<string>>,
  ): Promise<string[]>;
}
