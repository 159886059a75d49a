// The git implementation of Vcs. Workspaces are worktrees; a change is a
// single commit on the workspace branch carrying a `Change-Id:` trailer, its
// parent recorded under refs/incrementum/changes/<id>/base; every iteration's
// commit is kept at refs/incrementum/changes/<id>/<n> (and the latest at
// .../head), so replaced iterations stay diffable and survive gc. The change
// being worked on is a small file in the worktree's own git dir, so each
// workspace has its own and the user's checkout never sees it. Before each
// git command in a workspace its `.git` link is checked (worktree-link.ts):
// one repointed by whatever ran there fails the call and git is never run;
// a good one's git dir is named to git explicitly, so it is not read again.
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { UserError } from '../errors.js';
import { isWorkspaceBranch } from '../model/workspace-branch.js';
import { cappedDiff, type CappedDiff, type DiffLimits } from './capped-diff.js';
import { identOf, parseCommit, stripSpace } from './commit-object.js';
import { CommitWriter } from './commit-writer.js';
import { WorkspaceBatch } from './git-batch.js';
import { newChangeId, readChangeId, withChangeId } from './change-id.js';
import { git, gitRaw, GitError, type GitOptions } from './git-run.js';
import * as landing from './git-landing.js';
import * as remote from './git-remote.js';
import type { LandingVcs } from './landing-vcs.js';
import type { Base, FileStat, IterationCommit, LogEntry, StagedCopy, Vcs } from './vcs.js';
import { PROTOCOL_FILES } from './vcs.js';
import { headFiles, readRefFile, withLockRetry, withStaleBranchLock } from './branch-guards.js';
import { WorkspaceRedirected, WorktreeLinks } from './worktree-link.js';
import { revArg } from './rev-arg.js';
import { treesOfIndex } from './index-tree.js';

export { STALE_REF_LOCK_MS } from './branch-guards.js';

const CHANGE_FILE = 'incrementum-change';
export const CHANGE_REFS = 'refs/incrementum/changes';

/** Pathspecs leaving out the protocol files wherever they are. */
const EXCLUDE_PROTOCOL = PROTOCOL_FILES.map((f) => `:(exclude,glob)**/${f}`);
const PROTOCOL_GLOBS = PROTOCOL_FILES.map((f) => `:(glob)**/${f}`);
const isProtocolFile = (path: string): boolean =>
  (PROTOCOL_FILES as readonly string[]).includes(posix.basename(path));

export const changeRef = (changeId: string, leaf: string | number): string =>
  `${CHANGE_REFS}/${changeId}/${leaf}`;

const ALL_REFS = ['--branches', '--tags', '--remotes'];
const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const FILES_MEMO_SIZE = 64;
const TREES_MEMO_SIZE = 256;
const STORED_TREES_SIZE = 4096;
/** diff-tree's options for the file lists of an iteration (the same records `git diff --raw --numstat` gives). */
const DIFF_PAIRS = ['--always', '-r', '--no-renames', '--no-ext-diff', '-z', '--raw', '--numstat'];
/** The end of a field holding a raw record's header (`:<mode> <mode> <id> <id> <letter>[score]`). */
const RAW_RECORD = /(?:^|\n):[0-7]{6} [0-7]{6} [0-9a-f]+ [0-9a-f]+ [A-Z]\d*$/;

export interface GitVcsOptions {
  /**
   * Check a workspace's `.git` link before each git command there (the
   * default). Off only for callers that read diffs from the user's own
   * checkout, which may keep its git dir apart (a submodule's `.git` file)
   * and runs nothing that writes.
   */
  checkLinks?: boolean;
}

export class GitVcs implements Vcs, LandingVcs {
  private readonly commits = new CommitWriter({
    batch: (ws) => this.batch(ws),
    opts: (ws, o) => this.in(ws, o),
  });
  /** Each workspace's long-lived git processes (git-batch.ts), ended with the workspace or close(). */
  private readonly batches = new Map<string, WorkspaceBatch>();
  /** The same for reads in a checkout (checkoutBatch). */
  private readonly checkouts = new Map<string, WorkspaceBatch>();
  /** Trees known to hold no protocol file (every iteration's): a change on one needs no `rm --cached`. */
  private readonly cleanTrees = new Set<string>();
  /** Trees known to be in each workspace's object store (found or written by writeTree): not asked about again. */
  private readonly storedTrees = new Map<string, Set<string>>();
  private readonly filesMemo = new Map<string, FileStat[]>();
  /**
   * The tree of each commit this instance made or read: a file list depends
   * on the two trees alone, so the message-only rewrite describe makes shares
   * its iteration's answers instead of asking git again.
   */
  private readonly treeOf = new Map<string, string>();
  /**
   * What this instance knows of the change being worked on in each workspace
   * (its base, its last iteration): the refs it wrote itself, so an iteration
   * does not list them again. Checked when written (the new iteration's ref
   * must not exist yet); on a mismatch they are listed afresh.
   */
  private readonly changes = new Map<string, KnownChange>();
  /** The branch this instance put each workspace on (addWorkspace, resetWorkspace). */
  private readonly branches = new Map<string, string>();
  private readonly links: WorktreeLinks | null;

  constructor(o: GitVcsOptions = {}) {
    this.links = o.checkLinks === false ? null : new WorktreeLinks();
  }

  // Landing's steps (git-landing.ts), on the same object so the one GitVcs a
  // composition makes serves jobs and landings alike. They check the landing
  // worktree's link whatever checkLinks says: the project's tests ran there.
  readonly branchTip = landing.branchTip;
  readonly currentBranch = landing.currentBranch;
  readonly isAncestor = landing.isAncestor;
  readonly commitsBetween = landing.commitsBetween;
  readonly commitSubjects = landing.commitSubjects;
  readonly checkoutsOf = landing.checkoutsOf;
  readonly branchBusy = landing.branchBusy;
  readonly addLandingWorktree = landing.addLandingWorktree;
  readonly removeLandingWorktree = landing.removeLandingWorktree;
  readonly rebaseInWorktree = landing.rebaseInWorktree;
  readonly rebaseTakingJobSide = landing.rebaseTakingJobSide;
  readonly continueRebase = landing.continueRebase;
  readonly abortRebase = landing.abortRebase;
  readonly rebaseInProgress = landing.rebaseInProgress;
  readonly casBranch = landing.casBranch;
  readonly fastForwardCheckout = landing.fastForwardCheckout;
  readonly fileDiff = landing.fileDiff;
  readonly keepRef = landing.keepRef;
  readonly deleteBranch = landing.deleteBranch;

  // Job refs and landings across machines, through a remote (git-remote.ts).
  readonly pushChangeRefs = remote.pushChangeRefs;
  readonly missingCommits = remote.missingCommits;
  readonly fetchChangeRefs = remote.fetchChangeRefs;
  readonly remoteBranchTip = remote.remoteBranchTip;
  readonly pushBranchWithLease = remote.pushBranchWithLease;

  /** The long-lived git processes of `ws` (started on first use). */
  private batch(ws: string): WorkspaceBatch {
    let b = this.batches.get(ws);
    if (!b) this.batches.set(ws, (b = new WorkspaceBatch(ws, this.in(ws).before, DIFF_PAIRS)));
    return b;
  }

  /**
   * A checkout's long-lived cat-file, for reads in the person's own checkout
   * (resolveBase): no link check, as none of the one-off gits there had.
   */
  private checkoutBatch(root: string): WorkspaceBatch {
    let b = this.checkouts.get(root);
    if (!b) this.checkouts.set(root, (b = new WorkspaceBatch(root, undefined, DIFF_PAIRS)));
    return b;
  }

  release(ws: string): void {
    this.batches.get(ws)?.close();
    this.batches.delete(ws);
    this.storedTrees.delete(ws);
    this.commits.forget(ws);
  }

  /** Ends every workspace's long-lived git processes; they start again when next needed. */
  close(): void {
    for (const ws of [...this.batches.keys()]) this.release(ws);
    for (const b of this.checkouts.values()) b.close();
    this.checkouts.clear();
  }

  /** Options for a git command in the workspace `ws`: its link is checked just before git starts. */
  private in(ws: string, o: GitOptions = {}): GitOptions {
    const links = this.links;
    return links ? { ...o, before: () => links.check(ws) } : o;
  }

  async filesAt(root: string, rev: string, paths?: readonly string[]): Promise<string[]> {
    if (paths && paths.length === 0) return [];
    // --full-tree: the paths are from the root whatever the cwd; literal
    // pathspecs, so a name with `*` is itself.
    const out = await git(root, [
      '--literal-pathspecs',
      'ls-tree',
      '--full-tree',
      '--name-only',
      '-z',
      rev,
      ...(paths ? ['--', ...paths] : []),
    ]);
    return out.split('\0').filter((p) => p !== '');
  }

  async readFileAt(root: string, rev: string, path: string): Promise<string | null> {
    const r = await run(root, ['cat-file', 'blob', `${rev}:${path}`]);
    return r.code === 0 ? r.stdout : null;
  }

  async ignoreRules(root: string, paths: readonly string[]): Promise<Map<string, string>> {
    const rules = new Map<string, string>();
    if (paths.length === 0) return rules;
    // Exit 1 is "none of them is ignored"; --no-index: a tracked file is
    // asked about too (a rule that would ignore it, were it not committed).
    const r = await run(root, ['check-ignore', '--no-index', '--verbose', '-z', '--stdin'], {
      input: paths.join('\0') + '\0',
    });
    if (r.code !== 0 && r.code !== 1) throw new GitError(['check-ignore'], root, r);
    const f = r.stdout.split('\0');
    // Four fields per path: the file of the rule, its line, the pattern, the path.
    for (let i = 0; i + 3 < f.length; i += 4)
      if (f[i]) rules.set(f[i + 3]!, `\`${f[i + 2]}\` in ${f[i]}:${f[i + 1]}`);
    return rules;
  }

  async root(cwd: string): Promise<string> {
    const dir = resolve(cwd);
    if (!existsSync(dir)) throw new UserError(`${dir} does not exist: run ii from inside a git checkout.`);
    const r = await run(dir, ['rev-parse', '--show-toplevel']);
    // Anything else git says (killed, out of resources, a damaged .git) is
    // not "run ii from a checkout": say what git said.
    if (r.code !== 0 && !/not a git repository|must be run in a work tree/i.test(r.stderr))
      throw new GitError(['rev-parse', '--show-toplevel'], dir, r);
    if (r.code !== 0 || !r.stdout.trim())
      throw new UserError(
        `${dir} is not inside a git repository (with a working tree): run ii from a git checkout, or create one with git init.`,
      );
    return r.stdout.trim();
  }

  async resolveBase(root: string, rev?: string): Promise<Base> {
    // A base found is a commit: whether there is any is asked only when none
    // is found, to say which is missing (a job's start pays one git fewer).
    const noCommitsYet = async () => {
      if (!(await this.hasCommits(root)))
        throw new UserError(
          `the repository at ${root} has no commits yet, so there is no base revision to start from: make a first commit (git add -A && git commit -m initial), then run this again.`,
        );
    };
    if (rev !== undefined) {
      // A local branch named by --rev is where the job lands by default; a
      // tag, a sha or a remote-tracking ref is not a branch to move.
      const name = rev.replace(/^refs\/heads\//, '');
      // Both through the checkout's long-lived cat-file (git-batch.ts), one
      // request: `ii run` gives every job --rev, and its standby runner
      // starts that process while it waits (its warm-up), so a job's start
      // spawns no git for its base. A name git could not take on one line
      // (a line break, a leading dash) names no commit either way.
      const [sha, tip] =
        /[\n\r\0]/.test(rev) || rev.startsWith('-')
          ? [null, null]
          : (await this.checkoutBatch(root).info([`${rev}^{commit}`, `refs/heads/${name}^{commit}`])).map(
              (o) => (o?.type === 'commit' ? o.sha : null),
            );
      if (!sha) {
        await noCommitsYet();
        throw new UserError(
          `unknown revision '${rev}' in ${root}: pass --rev a branch, tag or commit that exists (git log --oneline --all lists them).`,
        );
      }
      return { sha, ref: rev, branch: tip === sha ? name : null };
    }
    // The branch checked out here, never a remote-tracking ref: in a clone
    // whose main is ahead of origin/main, the work (a dep's landed commits, a
    // committed config) is on main, not on the remote.
    const head = await run(root, ['symbolic-ref', '-q', 'HEAD']);
    if (head.code === 0 && head.stdout.trim()) {
      const ref = head.stdout.trim();
      const name = ref.replace(/^refs\/heads\//, '');
      const sha = await this.commitOf(root, ref);
      if (!sha) {
        await noCommitsYet();
        throw new UserError(
          `the branch ${name} checked out in ${root} has no commits yet, so there is no base revision to start from: commit on it, check out a branch that has commits, or pass --rev.`,
        );
      }
      return { sha, ref: name, branch: name };
    }
    // A detached HEAD: the commit checked out, and no branch to land on.
    const sha = await this.commitOf(root, 'HEAD');
    if (!sha) {
      await noCommitsYet();
      throw new UserError(`${root} has no commit checked out: check out a branch, or pass --rev.`);
    }
    return { sha, ref: 'HEAD', branch: null };
  }

  async addWorkspace(root: string, path: string, branch: string, baseRev: string): Promise<void> {
    mkdirSync(dirname(path), { recursive: true });
    this.release(path);
    // --force: a registration left by a worktree whose directory vanished
    // must not block its path; -B: a leftover branch of the same name is reset.
    await withStaleBranchLock(branch, () =>
      withLockRetry(() =>
        git(root, ['worktree', 'add', '--quiet', '--force', '-B', branch, path, revArg(baseRev)]),
      ),
    );
    // The link git has just written is the one every later command is checked against.
    this.links?.forget(path);
    this.links?.check(path);
    this.branches.set(path, branch);
  }

  async resetWorkspace(path: string, branch: string, baseRev: string): Promise<void> {
    this.release(path); // the job that used them is over
    // A symbolic ref written in the branch's own file (the agent could, its
    // folder is writable inside the sandbox) would carry `checkout -B` to the
    // branch it names: it is the workspace's own ref, dropped as it is.
    const files = headFiles(path);
    if (!files?.dropBranchLink(branch) && files?.branchFile(branch)?.startsWith('ref:'))
      await git(path, ['update-ref', '--no-deref', '-d', `refs/heads/${branch}`], this.in(path));
    // The branch it is on, read as git would (symbolic-ref), without a git process.
    const old = /^ref: refs\/heads\/(\S+)\s*$/.exec(files?.head ?? '')?.[1] ?? '';
    // --force: the index and the files as at baseRev, whatever the last job
    // left (changes, a merge or cherry-pick under way: its state goes too),
    // as `reset --hard` would; untracked files go below.
    await withStaleBranchLock(branch, () =>
      git(path, ['checkout', '--quiet', '--force', '-B', branch, revArg(baseRev)], this.in(path)),
    );
    // A workspace made by an earlier version was on a branch of another name
    // (incrementum/ws-<n>): it has moved to today's, and the old one goes.
    if (old !== branch && isWorkspaceBranch(old)) await run(path, ['branch', '-q', '-D', old], this.in(path));
    this.branches.set(path, branch);
    await git(path, ['clean', '-ffdxq'], this.in(path));
    rmSync(await this.changeFile(path), { force: true });
    this.changes.delete(path);
  }

  async removeWorkspace(root: string, path: string): Promise<void> {
    let branch: string | null = null;
    this.release(path);
    if (existsSync(path)) {
      // A workspace whose link was repointed names some other repository's
      // branch: its own is left (prune deletes it by the record's name).
      const b = await run(path, ['symbolic-ref', '-q', '--short', 'HEAD'], this.in(path)).catch(
        (err: unknown) => {
          if (err instanceof WorkspaceRedirected) return null;
          throw err;
        },
      );
      if (b?.code === 0) branch = b.stdout.trim();
      const r = await run(root, ['worktree', 'remove', '--force', '--force', path]);
      if (r.code !== 0 && existsSync(path)) rmSync(path, { recursive: true, force: true });
    }
    await run(root, ['worktree', 'prune']);
    this.links?.forget(path);
    this.changes.delete(path);
    // Only our own workspace branches; the commits stay under refs/incrementum.
    if (branch && isWorkspaceBranch(branch)) await run(root, ['branch', '-q', '-D', branch]);
  }

  async warm(ws: string): Promise<void> {
    await this.batch(ws).warm();
  }

  async moveWorkspace(root: string, from: string, to: string): Promise<void> {
    this.release(from);
    mkdirSync(dirname(to), { recursive: true });
    // git rewrites both links (the worktree's .git file and its gitdir in root);
    // a locked worktree is refused, and so left where it is.
    await git(root, ['worktree', 'move', from, to]);
    this.links?.forget(from);
    this.changes.delete(from);
    this.branches.delete(from);
  }

  async head(ws: string): Promise<string> {
    const known = this.knownHead(ws);
    if (known) return known;
    const [head] = await this.batch(ws).info(['HEAD']);
    if (head?.type !== 'commit')
      throw new GitError(['rev-parse', '--verify', 'HEAD'], ws, {
        code: 128,
        stdout: '',
        stderr: 'fatal: HEAD names no commit',
      });
    return head.sha;
  }

  /**
   * HEAD's commit as the workspace's files name it (its HEAD file, and the
   * loose ref of the branch that names), when it is a commit this instance
   * made or read (its tree known): no request to git. Anything else (a
   * packed ref, a ref to a ref, text that is no id, a commit not seen here)
   * is null, and git is asked. An id the agent wrote there is taken only if
   * it names such a commit; HEAD moves only from what was read here in the
   * refs' transaction (recordIteration).
   */
  private knownHead(ws: string): string | null {
    // The link is checked as before any git command (a repointed one throws),
    // and the files are read in the git dir it was pinned to.
    const pin = this.links?.check(ws);
    if (!pin) return null;
    // Read as agent-written files (readRefFile: no FIFO, link or huge file),
    // a branch only if it is the workspace's own (no `..` out of refs/heads),
    // in the common dir the link check verified (two levels above the git
    // dir), not the one the agent may have written in commondir since.
    const head = readRefFile(join(pin.gitDir, 'HEAD'));
    const branch = head && /^ref: refs\/heads\/(\S+)$/.exec(head)?.[1];
    const own = this.branches.get(ws);
    if (branch && !(own ? branch === own : isWorkspaceBranch(branch))) return null;
    const sha = branch ? readRefFile(join(dirname(dirname(pin.gitDir)), 'refs', 'heads', branch)) : head;
    return sha && FULL_SHA.test(sha) && this.treeOf.has(sha) ? sha : null;
  }

  async hasChanges(ws: string): Promise<boolean> {
    return (await this.statusPaths(ws, 'all')).length > 0;
  }

  uncommittedPaths(ws: string): Promise<string[]> {
    return this.statusPaths(ws, 'normal');
  }

  /** Paths git status lists in `ws` (untracked folders whole with 'normal'), protocol files left out. */
  private async statusPaths(ws: string, untracked: 'all' | 'normal'): Promise<string[]> {
    const out = await git(
      ws,
      ['status', '--porcelain=v1', '-z', `--untracked-files=${untracked}`, '--no-renames'],
      this.in(ws),
    );
    return out
      .split('\0')
      .filter(Boolean)
      .map((entry) => entry.slice(3))
      .filter((path) => !isProtocolFile(path));
  }

  async stageWorkingCopy(ws: string): Promise<StagedCopy> {
    const id = await this.currentChangeId(ws);
    const remembered = this.changes.get(ws);
    // No change yet, or refs this instance cannot read: the protocol files
    // are taken out as on a first iteration (one process more, same tree).
    const known =
      id === null
        ? null
        : remembered?.id === id
          ? remembered
          : await this.readChange(ws, id).catch(() => null);
    const tree = await this.stage(ws, known);
    const head = await this.headAndTree(ws);
    // The same tree: nothing to commit. Another: changed unless only
    // protocol files differ (status leaves them out too: the agent staged
    // one, or the base holds one the staging took out).
    const changed = tree !== head.tree && (await this.treesDifferBeyondProtocol(ws, head.tree, tree));
    return { ws, changed, tree, head: head.sha };
  }

  /** HEAD's commit and its tree: from the files when this instance knows the commit (knownHead), else from cat-file. */
  private async headAndTree(ws: string): Promise<{ sha: string; tree: string }> {
    const known = this.knownHead(ws);
    if (known) return { sha: known, tree: this.treeOf.get(known)! };
    const [head, tree] = await this.batch(ws).info(['HEAD', 'HEAD^{tree}']);
    if (head?.type !== 'commit' || tree?.type !== 'tree')
      throw new GitError(['rev-parse', '--verify', 'HEAD^{tree}'], ws, {
        code: 128,
        stdout: '',
        stderr: 'fatal: HEAD names no commit',
      });
    this.noteTree(head.sha, tree.sha);
    return { sha: head.sha, tree: tree.sha };
  }

  /** Whether the two trees differ in a path other than a protocol file's: one diff-tree request on the pipe. */
  private async treesDifferBeyondProtocol(ws: string, from: string, to: string): Promise<boolean> {
    const out = await this.batch(ws).diffTree([`${to} ${from}`]);
    // A tree pair's header is a line of its own ("<to> <from>\n"), run into
    // the first raw record's field; a raw record's field ends in its status
    // letter (":<mode> <mode> <id> <id> <letter>") and the next field is its path.
    const fields = out.split('\0');
    let paths = 0;
    for (let i = 0; i < fields.length - 1; i++) {
      if (!RAW_RECORD.test(fields[i]!)) continue;
      paths++;
      if (!isProtocolFile(fields[++i]!)) return true;
    }
    // Trees that differ with no record read: taken for changed (the commit
    // then shows what it holds) rather than an edit lost.
    return paths === 0;
  }

  async startChange(ws: string, id: string = newChangeId(), base?: string): Promise<string> {
    const known = base !== undefined && FULL_SHA.test(base) ? base : await this.head(ws);
    await this.batch(ws).transaction([`update ${changeRef(id, 'base')} ${known}`]);
    writeFileSync(await this.changeFile(ws), `${id}\n`);
    this.changes.set(ws, { id, base: known, last: null });
    return id;
  }

  async currentChangeId(ws: string): Promise<string | null> {
    try {
      return readFileSync(await this.changeFile(ws), 'utf8').trim() || null;
    } catch {
      return null;
    }
  }

  async commitIteration(ws: string, message: string, staged?: StagedCopy): Promise<IterationCommit> {
    const id = (await this.currentChangeId(ws)) ?? (await this.startChange(ws));
    const remembered = this.changes.get(ws);
    const known = remembered?.id === id ? remembered : await this.readChange(ws, id);
    // What stageWorkingCopy wrote is recorded as it is, and HEAD moves only
    // from the commit it was staged on, in the refs' transaction: HEAD still
    // there, the index still holds that tree (an agent's commit would have
    // moved it), and no request of its own asks first.
    const given =
      staged?.ws === ws && FULL_SHA.test(staged.tree) && FULL_SHA.test(staged.head) ? staged : null;
    try {
      return await this.recordIteration(ws, id, known, message, given);
    } catch (err) {
      // The refs moved under what this instance remembered (another process,
      // or the agent's own git), or HEAD moved since the staging: list them
      // again, stage again, and record on top of them.
      if (err instanceof GitError && err.args.includes('update-ref') && (known === remembered || given)) {
        this.changes.delete(ws);
        return this.recordIteration(ws, id, await this.readChange(ws, id), message, null);
      }
      throw err;
    }
  }

  /** The change's base and last iteration as its refs have them. */
  private async readChange(ws: string, id: string): Promise<KnownChange> {
    const { base, iterations } = await this.changeRefs(ws, id);
    if (!base) throw new Error(`change ${id} has no base ref (${changeRef(id, 'base')})`);
    const last = iterations.at(-1);
    return { id, base, last: last ? { n: last.n, sha: last.sha } : null };
  }

  /**
   * Stages the working copy as the change's next iteration, with the fewest
   * git processes: add, the tree (writeTree), the commit, one diff-tree for both file
   * lists the runner asks for next (against the previous iteration and the
   * change's base), one update-ref transaction for every ref.
   */
  private async recordIteration(
    ws: string,
    id: string,
    known: KnownChange,
    message: string,
    staged: StagedCopy | null = null,
  ): Promise<IterationCommit> {
    const { base, last } = known;
    const previous = last?.sha ?? base;
    const n = (last?.n ?? 0) + 1;
    let { commit, tree, lists } = await this.commitTree(
      ws,
      id,
      message,
      previous,
      base,
      staged?.tree ?? (await this.stage(ws, known)),
    );
    if (lists.protocol) {
      await this.unstageProtocolFiles(ws);
      ({ commit, tree, lists } = await this.commitTree(ws, id, message, previous, base));
    }
    this.checkOwnHead(ws);
    // The iteration's refs and the branch move together, in one process:
    // moving HEAD's branch is what `reset --soft` did, and the index already
    // holds the tree, so the working copy stays exactly as the agent left it.
    // The new iteration's ref must not exist yet (`create`): a stale memory
    // of the change fails here rather than overwriting an iteration.
    await this.batch(ws).transaction([
      `create ${changeRef(id, n)} ${commit}`,
      `update ${changeRef(id, 'head')} ${commit}`,
      staged ? `update HEAD ${commit} ${staged.head}` : `update HEAD ${commit}`,
    ]);
    this.changes.set(ws, { id, base, last: { n, sha: commit } });
    if (this.cleanTrees.size >= TREES_MEMO_SIZE)
      this.cleanTrees.delete(this.cleanTrees.values().next().value!);
    this.cleanTrees.add(tree);
    return { commit_id: commit, change_id: id, files: lists.fromPrevious.map((f) => ({ ...f })) };
  }

  /**
   * Stages the whole working copy, protocol files left out, and writes it as
   * a tree: add, then writeTree. One the agent staged or committed itself is
   * still in the index; the previous iteration never holds one (this code
   * takes them out), so the diff against it shows any, and only then are
   * they taken out and the tree written again (recordIteration). The base
   * may hold one (a repository that commits it): on a first iteration (or
   * no change known: `known` null) they are taken out before the tree is
   * written. A base this instance knows to hold none (the last change's
   * commit) needs no taking out: the diff against it shows any staged.
   */
  private async stage(ws: string, known: KnownChange | null): Promise<string> {
    await git(ws, ['add', '--all', '--', '.', ...EXCLUDE_PROTOCOL], this.in(ws));
    const baseTree = known && this.treeOf.get(known.base);
    if (!known?.last && !(baseTree && this.cleanTrees.has(baseTree))) await this.unstageProtocolFiles(ws);
    return this.writeTree(ws, known?.base);
  }

  /**
   * `git write-tree`'s answer: computed from the index file (index-tree.ts)
   * and the trees git lacks written through the workspace's mktree, with no
   * git process of its own; write-tree itself where the index is not the
   * plain case, or no commit of the repository tells its id length (`like`).
   */
  private async writeTree(ws: string, like?: string): Promise<string> {
    const pin = like && FULL_SHA.test(like) ? this.links?.check(ws) : null;
    const index = pin ? readIndex(join(pin.gitDir, 'index')) : null;
    const computed = index && treesOfIndex(index, like!.length === 64 ? 32 : 20);
    if (!computed) return git(ws, ['write-tree'], this.in(ws));
    // Known per workspace (and forgotten with it): another repository's store may lack the same tree.
    let stored = this.storedTrees.get(ws);
    if (!stored) this.storedTrees.set(ws, (stored = new Set()));
    const unknown = computed.trees.filter((t) => !stored.has(t.sha));
    if (unknown.length > 0) {
      // Written whether or not git has them (no round trip to ask first):
      // mktree stores a tree it has as cheaply, and the entry cap bounds them.
      await this.batch(ws).writeTrees(unknown);
      for (const t of unknown) {
        if (stored.size >= STORED_TREES_SIZE) stored.delete(stored.values().next().value!);
        stored.add(t.sha);
      }
    }
    return computed.root;
  }

  /**
   * Refuses to move HEAD unless it is the workspace's own branch and that
   * branch is a plain ref: the agent can rewrite both (headFiles), and git
   * would then move the branch they name, the user's main included.
   */
  private checkOwnHead(ws: string): void {
    const files = headFiles(ws);
    if (!files) return; // a repository of its own: nothing of the user's to reach
    const branch = /^ref: refs\/heads\/(\S+)$/.exec(files.head ?? '')?.[1];
    const own = this.branches.get(ws);
    const ok = branch !== undefined && (own ? branch === own : isWorkspaceBranch(branch));
    if (!ok || files.branchFile(branch)?.startsWith('ref:'))
      // Nothing the agent wrote is quoted: HEAD and the ref file are its text.
      throw new UserError(
        `the workspace ${ws} is no longer on its own branch${own ? ` (${own})` : ''}: its HEAD, or the branch it names, was rewritten to point elsewhere by something in the workspace (the agent). Nothing was committed, so no branch it points at was moved.`,
      );
  }

  private async unstageProtocolFiles(ws: string): Promise<void> {
    await git(
      ws,
      ['rm', '--cached', '--quiet', '--ignore-unmatch', '-r', '--', ...PROTOCOL_GLOBS],
      this.in(ws),
    );
  }

  /**
   * Writes the index as a tree (`written`: already written, by stage), commits it on `base`, and lists its files
   * against `previous` and `base` in one diff-tree (remembered for
   * changedFiles). `protocol`: the tree holds a protocol file the previous
   * iteration does not.
   */
  private async commitTree(
    ws: string,
    id: string,
    message: string,
    previous: string,
    base: string,
    written?: string,
  ): Promise<{ commit: string; tree: string; lists: { fromPrevious: FileStat[]; protocol: boolean } }> {
    const tree = written ?? (await this.writeTree(ws, base));
    const commit = await this.commits.write(ws, tree, [base], withChangeId(message, id));
    this.noteTree(commit, tree);
    const pairs = previous === base ? [previous] : [previous, base];
    const [fromPrevious, fromBase] = await this.diffPairs(ws, commit, pairs);
    this.remember(previous, commit, fromPrevious!.files);
    if (fromBase) this.remember(base, commit, fromBase.files);
    return { commit, tree, lists: { fromPrevious: fromPrevious!.files, protocol: fromPrevious!.protocol } };
  }

  /**
   * What `git commit --amend --only --cleanup=whitespace` did, with no git
   * process of its own (commit-writer.ts): HEAD's tree, parents and author with
   * the new message; HEAD and the change's head ref then move in one
   * transaction, HEAD only from the commit read (an agent's commit meanwhile
   * fails it).
   */
  async describe(ws: string, message: string): Promise<string> {
    const batch = this.batch(ws);
    const head = await batch.contents('HEAD');
    if (head?.type !== 'commit') throw new Error(`no change to describe in ${ws}: HEAD names no commit`);
    const old = parseCommit(head.body);
    const id = (await this.currentChangeId(ws)) ?? readChangeId(old.message);
    if (!id) throw new Error(`no change to describe in ${ws}: start one first`);
    this.checkOwnHead(ws);
    const sha = await this.commits.write(ws, old.tree, old.parents, stripSpace(withChangeId(message, id)), {
      line: identOf(old.author) && old.author,
      env: old.authorEnv,
    });
    // The tree is the amended commit's, so the file lists already known for that one hold for it too.
    this.noteTree(sha, old.tree);
    await batch.transaction([`update HEAD ${sha} ${head.sha}`, `update ${changeRef(id, 'head')} ${sha}`]);
    return sha;
  }

  async changedFiles(ws: string, from: string, to: string): Promise<FileStat[]> {
    // Commits never change, so a pair of full shas always has the same answer:
    // a change's first iteration, and the snapshots on either side of an
    // iteration, ask for the same pair again.
    const key = this.memoKey(from, to);
    const known = key ? this.filesMemo.get(key) : undefined;
    if (known) return known.map((f) => ({ ...f }));
    const files = await this.diffFiles(ws, from, to);
    this.remember(from, to, files);
    return files;
  }

  /** The memo's key for a pair: by tree where this instance knows it (a file list depends on the trees alone). */
  private memoKey(from: string, to: string): string | null {
    if (!FULL_SHA.test(from) || !FULL_SHA.test(to)) return null;
    return `${this.treeOf.get(from) ?? from}..${this.treeOf.get(to) ?? to}`;
  }

  private remember(from: string, to: string, files: FileStat[]): void {
    const key = this.memoKey(from, to);
    if (!key) return;
    if (this.filesMemo.size >= FILES_MEMO_SIZE) this.filesMemo.delete(this.filesMemo.keys().next().value!);
    this.filesMemo.set(
      key,
      files.map((f) => ({ ...f })),
    );
  }

  private noteTree(commit: string, tree: string): void {
    if (!FULL_SHA.test(commit) || !FULL_SHA.test(tree)) return;
    if (this.treeOf.size >= TREES_MEMO_SIZE) this.treeOf.delete(this.treeOf.keys().next().value!);
    this.treeOf.set(commit, tree);
  }

  /**
   * The files between each of `froms` and `to`, in one `git diff-tree
   * --stdin` (one line `<to> <from>` per pair); `protocol` when a protocol
   * file is among them. The same records `git diff --raw --numstat` gives.
   */
  private async diffPairs(
    ws: string,
    to: string,
    froms: string[],
  ): Promise<{ files: FileStat[]; protocol: boolean }[]> {
    // --always (DIFF_PAIRS): a pair with no difference still prints its header.
    const out = await this.batch(ws).diffTree(froms.map((f) => `${to} ${f}`));
    // Each pair: its header (the first id of its line), its raw records (a
    // header starting with ':', then the path), its numstat records
    // (additions, deletions, path in one field). A path field only ever
    // follows a raw header, so a path that looks like an id is still a path.
    const fields = out.split('\0');
    const lists: { files: FileStat[]; protocol: boolean }[] = [];
    let entries: { path: string; code: string }[] = [];
    let counts = new Map<string, { additions: number; deletions: number }>();
    const close = () => lists.push(fileStats(entries, counts));
    let open = false;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (f === '') continue;
      if (f.startsWith(':')) {
        entries.push({ code: f.slice(f.lastIndexOf(' ') + 1), path: fields[++i] ?? '' });
      } else if (/^(?:\d+|-)\t(?:\d+|-)\t/.test(f)) {
        const [a, d, ...rest] = f.split('\t');
        counts.set(rest.join('\t'), { additions: Number(a) || 0, deletions: Number(d) || 0 });
      } else if (FULL_SHA.test(f)) {
        if (open) close();
        open = true;
        entries = [];
        counts = new Map();
      } else
        throw new Error(`unexpected output of git diff-tree in ${ws}: ${JSON.stringify(f.slice(0, 80))}`);
    }
    if (open) close();
    if (lists.length !== froms.length)
      throw new Error(`git diff-tree in ${ws} answered ${lists.length} of ${froms.length} pairs`);
    return lists;
  }

  private async diffFiles(ws: string, from: string, to: string): Promise<FileStat[]> {
    // One diff with both formats: the raw records (status, path) come first,
    // then the numstat records (additions, deletions, path).
    const out = await git(
      ws,
      ['diff', '--no-renames', '--no-ext-diff', '-z', '--raw', '--numstat', revArg(from), revArg(to)],
      this.in(ws),
    );
    const parts = out.split('\0');
    const entries: { path: string; code: string }[] = [];
    let i = 0;
    // A raw record is a header starting with ':' ending in the status letter,
    // then the path as its own field (which may itself start with ':').
    for (; i + 1 < parts.length && parts[i]!.startsWith(':'); i += 2)
      entries.push({ code: parts[i]!.slice(parts[i]!.lastIndexOf(' ') + 1), path: parts[i + 1]! });
    const counts = new Map<string, { additions: number; deletions: number }>();
    for (const rec of parts.slice(i).filter(Boolean)) {
      const [a, d, ...rest] = rec.split('\t');
      // Binary files show "-": they count as 0 lines.
      counts.set(rest.join('\t'), { additions: Number(a) || 0, deletions: Number(d) || 0 });
    }
    return fileStats(entries, counts).files;
  }

  diff(ws: string, from: string, to: string, limits?: DiffLimits): Promise<CappedDiff> {
    return cappedDiff(ws, from, to, ['.', ...EXCLUDE_PROTOCOL], limits, this.in(ws));
  }

  async log(ws: string, base: string, head: string): Promise<LogEntry[]> {
    const out = await git(
      ws,
      ['log', '--reverse', '--format=%H|%ct|%s', `${revArg(base)}..${revArg(head)}`],
      this.in(ws),
    );
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [sha, time, ...subject] = line.split('|');
        return { sha: sha!, time: Number(time), subject: subject.join('|') };
      });
  }

  async pruneChangeRefs(
    root: string,
    recorded: () => ReadonlySet<string> | Promise<ReadonlySet<string>>,
  ): Promise<string[]> {
    const out = await git(root, ['for-each-ref', '--format=%(refname)', `${CHANGE_REFS}/`]);
    const byChange = new Map<string, string[]>();
    for (const ref of out.split('\n').filter(Boolean)) {
      const id = ref.slice(CHANGE_REFS.length + 1).split('/')[0]!;
      byChange.set(id, [...(byChange.get(id) ?? []), ref]);
    }
    if (byChange.size === 0) return [];
    // Read only now that the refs are listed: a change is recorded before its
    // refs are made, so every ref listed above whose change a job holds is in this.
    const keep = await recorded();
    const gone = [...byChange.keys()].filter((id) => !keep.has(id));
    if (gone.length === 0) return [];
    await git(root, ['update-ref', '-m', 'incrementum: prune changes no job records', '--stdin'], {
      input: gone.flatMap((id) => byChange.get(id)!.map((ref) => `delete ${ref}\n`)).join(''),
    });
    return gone;
  }

  // ─── helpers ────────────────────────────────────────────────────────────

  /** The full sha of `rev` as a commit, or null when it names none. */
  private async commitOf(cwd: string, rev: string): Promise<string | null> {
    const r = await run(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
    return r.code === 0 ? r.stdout.trim() : null;
  }

  /**
   * Whether any commit exists. Not `rev-list --all`: that includes the HEAD of
   * every worktree, and one being added by another process has no valid HEAD yet.
   */
  private async hasCommits(root: string): Promise<boolean> {
    if (await this.commitOf(root, 'HEAD')) return true;
    const r = await run(root, ['rev-list', '-n', '1', ...ALL_REFS]);
    return r.code === 0 && r.stdout.trim() !== '';
  }

  /** A change's base and its recorded iterations (ascending), from one for-each-ref. */
  private async changeRefs(
    ws: string,
    id: string,
  ): Promise<{ base: string | null; iterations: { n: number; sha: string }[] }> {
    const out = await git(
      ws,
      ['for-each-ref', '--format=%(objectname) %(objecttype) %(refname)', `${CHANGE_REFS}/${id}/`],
      this.in(ws),
    );
    let base: string | null = null;
    const iterations: { n: number; sha: string }[] = [];
    for (const line of out.split('\n')) {
      const [sha, type, ref] = line.split(' ');
      if (!sha || type !== 'commit' || !ref) continue;
      const leaf = ref.slice(ref.lastIndexOf('/') + 1);
      if (leaf === 'base') base = sha;
      else if (/^\d+$/.test(leaf)) iterations.push({ n: Number(leaf), sha });
    }
    iterations.sort((a, b) => a.n - b.n);
    return { base, iterations };
  }

  /**
   * The workspace's own git dir (a worktree's is under the main repo's
   * .git/worktrees). Read from its `.git` file or folder, so the commands run
   * every iteration do not spawn git for it; git answers when `ws` is not
   * a top level.
   */
  private async changeFile(ws: string): Promise<string> {
    // The file is written there: never into a git dir the link was repointed
    // at, so the git dir the check found is used, not the link read again.
    const pin = this.links?.check(ws);
    if (pin) return join(pin.gitDir, CHANGE_FILE);
    const dotGit = join(ws, '.git');
    try {
      if (statSync(dotGit).isDirectory()) return join(resolve(dotGit), CHANGE_FILE);
      const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
      if (m) return join(resolve(ws, m[1]!.trim()), CHANGE_FILE);
    } catch {}
    return join(await git(ws, ['rev-parse', '--absolute-git-dir'], this.in(ws)), CHANGE_FILE);
  }
}

/** What this instance knows of a workspace's change: its base, its last iteration (null before the first). */
interface KnownChange {
  id: string;
  base: string;
  last: { n: number; sha: string } | null;
}

/** Raw records (status, path) and numstat counts as a file list, protocol files left out (and said). */
function fileStats(
  entries: { path: string; code: string }[],
  counts: Map<string, { additions: number; deletions: number }>,
): { files: FileStat[]; protocol: boolean } {
  const files: FileStat[] = [];
  let protocol = false;
  for (const { code, path } of entries) {
    if (isProtocolFile(path)) {
      protocol = true;
      continue;
    }
    const status = code === 'A' ? 'added' : code === 'D' ? 'removed' : 'modified';
    files.push({ path, status, ...(counts.get(path) ?? { additions: 0, deletions: 0 }) });
  }
  return { files, protocol };
}

/** gitRaw, but a missing git binary is the user's to fix. */
async function run(cwd: string, args: string[], o?: GitOptions) {
  try {
    return await gitRaw(cwd, args, o);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && existsSync(cwd))
      throw new UserError('git is not installed or not on PATH: install git, then run this again.');
    throw err;
  }
}

/** True when git ignores `path` (relative to `root`); a tracked file never counts as ignored. */
export async function gitIgnores(root: string, path: string): Promise<boolean> {
  return (await run(root, ['check-ignore', '-q', '--', path])).code === 0;
}

/** Above this an index is not read here (MAX_INDEX_ENTRIES entries take far less): write-tree reads it. */
const MAX_INDEX_BYTES = 32 << 20;

/**
 * The index file's bytes, or null (write-tree then reads it). The agent's
 * shell can write the worktree's git dir: a symlink there to /dev/zero or a
 * FIFO would have readFileSync read for ever or block, so only a regular
 * file of a bounded size is read, through no symlink.
 */
export function readIndex(path: string): Buffer | null {
  let fd: number | null = null;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_INDEX_BYTES) return null;
    return readFileSync(fd);
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
