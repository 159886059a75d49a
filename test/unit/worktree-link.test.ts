// The check of a workspace's `.git` link before git runs there, on real
// worktrees: every way the link can be repointed is refused before any git
// process starts, so the user's repository (its main, HEAD and index) never
// changes; a workspace made again works again.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRaw } from '../../src/vcs/git-run.js';
import { WorkspaceRedirected, WorktreeLinks } from '../../src/vcs/worktree-link.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: { path: string; cleanup: () => void };
let repo: string;
let ws: string;
let link: string;
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

beforeEach(() => {
  tmp = tempDir('ii-wtlink-');
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'README.md': '# r\n' });
  ws = join(tmp.path, 'state', 'workspaces', 'r', '1');
  git(repo, 'worktree', 'add', '-q', '-b', 'incrementum/ws-1', ws);
  link = readFileSync(join(ws, '.git'), 'utf8');
  // The user has work staged, not yet committed.
  writeFileSync(join(repo, 'staged.txt'), 'mine\n');
  git(repo, 'add', 'staged.txt');
});
afterEach(() => tmp.cleanup());

const userRepo = () => ({
  main: git(repo, 'rev-parse', 'refs/heads/main'),
  head: git(repo, 'symbolic-ref', 'HEAD'),
  index: git(repo, 'ls-files', '--stage'),
  reflog: git(repo, 'reflog', 'show', '--format=%gs', 'refs/heads/main'),
});
const setLink = (text: string) => writeFileSync(join(ws, '.git'), text);
const refusal = (fn: () => unknown): WorkspaceRedirected => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WorkspaceRedirected);
    return err as WorkspaceRedirected;
  }
  throw new Error('expected the check to refuse');
};

describe('WorktreeLinks.check', () => {
  it('passes the link git worktree add wrote, and a folder inside the workspace', () => {
    const links = new WorktreeLinks();
    links.check(ws);
    links.check(ws); // the second time from memory
    mkdirSync(join(ws, 'deep/er'), { recursive: true });
    links.check(join(ws, 'deep/er'));
  });

  it('passes a checkout with its own .git directory it has not seen as a link (the user repository)', () => {
    new WorktreeLinks().check(repo);
  });

  it('passes the same git dir named by a relative path (worktree.useRelativePaths)', () => {
    const links = new WorktreeLinks();
    setLink(`gitdir: ${relative(ws, join(repo, '.git/worktrees/1'))}\n`);
    links.check(ws);
  });

  it("refuses the user's .git, naming what the link now says", () => {
    setLink(`gitdir: ${repo}/.git\n`);
    const err = refusal(() => new WorktreeLinks().check(ws));
    expect(err.message).toContain(
      `the workspace's .git (${ws}/.git) no longer points at its own worktree git dir`,
    );
    expect(err.message).toContain(`"gitdir: ${repo}/.git"`);
    expect(err.message).toMatch(/not a worktree's git dir/);
    expect(err.message).toMatch(/no git command was run there/);
  });

  it('refuses a link found good before and then changed (no memory of the old text passes the new)', () => {
    const links = new WorktreeLinks();
    links.check(ws);
    setLink(`gitdir: ${repo}/.git/\n`);
    refusal(() => links.check(ws));
  });

  it("refuses a look-alike worktree git dir outside the workspace whose commondir is the user's", () => {
    const fake = join(tmp.path, 'elsewhere', 'worktrees', '1');
    mkdirSync(fake, { recursive: true });
    writeFileSync(join(fake, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(fake, 'commondir'), `${repo}/.git\n`);
    writeFileSync(join(fake, 'gitdir'), `${ws}/.git\n`);
    setLink(`gitdir: ${fake}\n`);
    expect(refusal(() => new WorktreeLinks().check(ws)).message).toMatch(
      /not where git keeps a worktree's git dir/,
    );
  });

  it("refuses another worktree's git dir", () => {
    const other = join(tmp.path, 'other');
    git(repo, 'worktree', 'add', '-q', '--detach', other);
    setLink(readFileSync(join(other, '.git'), 'utf8'));
    expect(refusal(() => new WorktreeLinks().check(ws)).message).toMatch(/the git dir of another worktree/);
  });

  it.each(['fake', '..fake'])(
    'refuses a git dir made inside the workspace (%s), even one that names the workspace back',
    (name) => {
      const fake = join(ws, name);
      mkdirSync(fake);
      writeFileSync(join(fake, 'HEAD'), 'ref: refs/heads/main\n');
      writeFileSync(join(fake, 'commondir'), `${repo}/.git\n`);
      writeFileSync(join(fake, 'gitdir'), `${ws}/.git\n`);
      setLink(`gitdir: ${fake}\n`);
      expect(refusal(() => new WorktreeLinks().check(ws)).message).toMatch(/inside the workspace itself/);
      // Reached through a link out and back in, it is still inside.
      symlinkSync(ws, join(tmp.path, 'alias'));
      setLink(`gitdir: ${join(tmp.path, 'alias', name)}\n`);
      refusal(() => new WorktreeLinks().check(ws));
    },
  );

  it('refuses what is not a gitdir line, a missing target, a symbolic link, a directory, a FIFO', () => {
    const links = new WorktreeLinks();
    links.check(ws);
    for (const text of ['', 'gitdir:\n', `gitdir: ${repo}/.git\ngitdir: ${repo}/.git\n`, 'x'.repeat(5000)]) {
      setLink(text);
      refusal(() => links.check(ws));
    }
    setLink('gitdir: /nowhere/at/all\n');
    expect(refusal(() => links.check(ws)).message).toMatch(/as when it was made or first checked/);
    expect(refusal(() => new WorktreeLinks().check(ws)).message).toMatch(/does not exist/);
    rmSync(join(ws, '.git'));
    writeFileSync(join(tmp.path, 'link-text'), link);
    symlinkSync(join(tmp.path, 'link-text'), join(ws, '.git'));
    expect(refusal(() => links.check(ws)).message).toMatch(/symbolic link/);
    rmSync(join(ws, '.git'));
    execFileSync('git', ['init', '-q', ws]);
    expect(refusal(() => links.check(ws)).message).toMatch(/now a directory/);
    rmSync(join(ws, '.git'), { recursive: true });
    execFileSync('mkfifo', [join(ws, '.git')]);
    refusal(() => links.check(ws));
  });

  it('refuses a deleted link, whether or not it was seen, when a repository holds the folders above', () => {
    execFileSync('git', ['init', '-q', join(tmp.path, 'state')]);
    rmSync(join(ws, '.git'));
    expect(refusal(() => new WorktreeLinks().check(ws)).message).toMatch(/it is gone/);
    const seen = new WorktreeLinks();
    setLink(link);
    seen.check(ws);
    rmSync(join(ws, '.git'));
    refusal(() => seen.check(ws));
  });
});

describe('gitRaw with a check', () => {
  it('a check that throws: git is not started, the call rejects with its error', async () => {
    const marker = join(tmp.path, 'ran');
    const err = new Error('no');
    await expect(
      gitRaw(repo, ['-c', `alias.x=!touch ${marker}`, 'x'], {
        before: () => {
          throw err;
        },
      }),
    ).rejects.toBe(err);
    expect(() => readFileSync(marker)).toThrow();
  });
});

describe('a link changed after the check, before git starts', () => {
  it('is not followed: git is given the checked git dir and work tree', async () => {
    const links = new WorktreeLinks();
    const racing = {
      before: () => {
        const pin = links.check(ws);
        setLink(`gitdir: ${repo}/.git\n`); // what a process racing the check would do
        return pin;
      },
    };
    const gitDir = await gitRaw(ws, ['rev-parse', '--absolute-git-dir'], racing);
    expect(gitDir.stdout.trim()).toBe(join(repo, '.git', 'worktrees', '1'));
    setLink(link);
    const head = await gitRaw(ws, ['symbolic-ref', 'HEAD'], racing);
    expect(head.stdout.trim()).toBe('refs/heads/incrementum/ws-1');
    setLink(link);
    const before = userRepo();
    const added = await gitRaw(ws, ['update-ref', 'HEAD', git(repo, 'rev-parse', 'HEAD')], racing);
    expect(added.code).toBe(0);
    expect(userRepo()).toEqual(before);
  });
});

describe('GitVcs in a repointed workspace', () => {
  it("every operation fails with WorkspaceRedirected and the user's repository is untouched; made again, it works", async () => {
    const vcs = new GitVcs();
    const base = (await vcs.resolveBase(repo)).sha;
    await vcs.removeWorkspace(repo, ws);
    await vcs.addWorkspace(repo, ws, 'incrementum/ws-1', base);
    const id = await vcs.startChange(ws);
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    const before = userRepo();
    setLink(`gitdir: ${repo}/.git\n`);
    const ops: [string, () => Promise<unknown>][] = [
      ['head', () => vcs.head(ws)],
      ['hasChanges', () => vcs.hasChanges(ws)],
      ['startChange', () => vcs.startChange(ws)],
      ['commitIteration', () => vcs.commitIteration(ws, 'iteration')],
      ['describe', () => vcs.describe(ws, 'final')],
      ['changedFiles', () => vcs.changedFiles(ws, base, 'HEAD')],
      ['diff', () => vcs.diff(ws, base, 'HEAD')],
      ['log', () => vcs.log(ws, base, 'HEAD')],
      ['resetWorkspace', () => vcs.resetWorkspace(ws, 'incrementum/ws-1', base)],
    ];
    for (const [name, op] of ops) await expect(op(), name).rejects.toBeInstanceOf(WorkspaceRedirected);
    expect(await vcs.currentChangeId(ws)).toBeNull(); // never read from the user's git dir
    expect(() => readFileSync(join(repo, '.git', 'incrementum-change'))).toThrow();
    expect(userRepo()).toEqual(before);
    expect(git(repo, 'status', '--porcelain')).toBe('A  staged.txt');
    // Removing it works from the repository alone; made again, the workspace is sound.
    await vcs.removeWorkspace(repo, ws);
    await vcs.addWorkspace(repo, ws, 'incrementum/ws-1', base);
    expect(await vcs.head(ws)).toBe(base);
    expect(await vcs.currentChangeId(ws)).toBeNull();
    expect(id).toMatch(/^I[0-9a-f]{40}$/);
    expect(userRepo()).toEqual(before);
  });

  it('diff readers that opt out still read a checkout whose .git is a separate git dir', async () => {
    const sep = join(tmp.path, 'sep');
    mkdirSync(sep);
    execFileSync('git', ['init', '-q', '-b', 'main', `--separate-git-dir=${join(tmp.path, 'sep.git')}`], {
      cwd: sep,
    });
    writeFileSync(join(sep, 'a.txt'), 'a\n');
    git(sep, 'add', 'a.txt');
    git(sep, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qm', 'one');
    writeFileSync(join(sep, 'a.txt'), 'b\n');
    git(sep, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qam', 'two');
    await expect(new GitVcs().changedFiles(sep, 'HEAD~1', 'HEAD')).rejects.toBeInstanceOf(
      WorkspaceRedirected,
    );
    expect(await new GitVcs({ checkLinks: false }).changedFiles(sep, 'HEAD~1', 'HEAD')).toEqual([
      { path: 'a.txt', status: 'modified', additions: 1, deletions: 1 },
    ]);
  });
});

describe("the landing worktree (GitVcs's LandingVcs, src/vcs/git-landing.ts)", () => {
  it("a repointed link: the rebase is refused, no rebase is taken to be there, removal works, the user's repository untouched", async () => {
    const land = new GitVcs();
    const lw = join(tmp.path, 'state', 'landing', 'j1');
    const base = git(repo, 'rev-parse', 'HEAD');
    await land.addLandingWorktree(repo, lw, base);
    const before = userRepo();
    writeFileSync(join(lw, '.git'), `gitdir: ${repo}/.git\n`);
    await expect(land.rebaseInWorktree(lw, base, base, base)).rejects.toBeInstanceOf(WorkspaceRedirected);
    await expect(land.rebaseTakingJobSide(lw, base, base, base)).rejects.toBeInstanceOf(WorkspaceRedirected);
    await expect(land.continueRebase(lw)).rejects.toBeInstanceOf(WorkspaceRedirected);
    expect(await land.rebaseInProgress(lw)).toBe(false);
    await land.removeLandingWorktree(repo, lw);
    expect(() => readFileSync(join(lw, '.git'))).toThrow();
    expect(userRepo()).toEqual(before);
    expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain(lw);
  });
});

describe('a worktree HEAD or branch ref that is not a regular file', () => {
  const gitDir = () => join(repo, '.git', 'worktrees', '1');
  it('a FIFO as HEAD is refused before git runs (git would hang on it), saying what to do', async () => {
    const vcs = new GitVcs();
    const links = new WorktreeLinks();
    links.check(ws);
    rmSync(join(gitDir(), 'HEAD'));
    execFileSync('mkfifo', [join(gitDir(), 'HEAD')]);
    const err = refusal(() => links.check(ws));
    expect(err.message).toContain(join(gitDir(), 'HEAD'));
    expect(err.message).toContain('a FIFO');
    expect(err.message).toContain('made afresh');
    // Through the Vcs too: refused, not hung (the test's own timeout bounds it).
    await expect(vcs.uncommittedPaths(ws)).rejects.toBeInstanceOf(WorkspaceRedirected);
  });

  it("a FIFO as the worktree's own branch (a loose ref) is refused", () => {
    const links = new WorktreeLinks();
    links.check(ws);
    const ref = join(repo, '.git', 'refs', 'heads', 'incrementum', 'ws-1');
    rmSync(ref, { force: true }); // loose or packed: the FIFO takes its place
    execFileSync('mkfifo', [ref]);
    const err = refusal(() => links.check(ws));
    expect(err.message).toContain(ref);
    expect(err.message).toContain('a FIFO');
  });
});
