import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { readChangeId, withChangeId } from '../../src/vcs/change-id.js';
import { changeRef, GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const vcs = new GitVcs();
let tmp: ReturnType<typeof tempDir>;
let repo: string;
beforeEach(() => {
  tmp = tempDir();
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'README.md': '# test\n', 'a.txt': 'one\ntwo\n', 'gone.txt': 'bye\n' });
});
afterEach(() => tmp.cleanup());

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

/** A workspace on `incrementum/ws-1` at the repo's base. */
async function workspace(): Promise<{ ws: string; base: string }> {
  const base = (await vcs.resolveBase(repo)).sha;
  const ws = join(tmp.path, 'state', 'workspaces', 'repo', '1');
  await vcs.addWorkspace(repo, ws, 'incrementum/ws-1', base);
  return { ws, base };
}

describe('change ids', () => {
  it('adds exactly one trailer, replacing an old one and joining a trailer block', () => {
    const id = `I${'a'.repeat(40)}`;
    const old = `I${'b'.repeat(40)}`;
    expect(withChangeId('Fix it\n', id)).toBe(`Fix it\n\nChange-Id: ${id}\n`);
    expect(withChangeId(`Fix it\n\nbody\n\nChange-Id: ${old}\n`, id)).toBe(
      `Fix it\n\nbody\n\nChange-Id: ${id}\n`,
    );
    expect(withChangeId('Fix it\n\nSigned-off-by: A <a@b>\n', id)).toBe(
      `Fix it\n\nSigned-off-by: A <a@b>\nChange-Id: ${id}\n`,
    );
    expect(readChangeId(withChangeId('', id))).toBe(id);
    expect(readChangeId('no trailer')).toBeNull();
  });
});

describe('root and base revision', () => {
  it('finds the root from a subfolder', async () => {
    mkdirSync(join(repo, 'sub', 'deep'), { recursive: true });
    expect(await vcs.root(join(repo, 'sub', 'deep'))).toBe(git(repo, 'rev-parse', '--show-toplevel'));
  });

  it('says clearly when a path is not in a git repository, or does not exist', async () => {
    const plain = join(tmp.path, 'plain');
    mkdirSync(plain);
    const err = await rejection(vcs.root(plain));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(
      `${plain} is not inside a git repository (with a working tree): run ii from a git checkout, or create one with git init.`,
    );
    const missing = await rejection(vcs.root(join(tmp.path, 'nope')));
    expect(missing).toBeInstanceOf(UserError);
    expect(missing.message).toContain('does not exist');
  });

  it('a git that fails otherwise in a repository is reported as git said it, not as "not a git repository"', async () => {
    // A git that dies as one killed under load would: no stdout, a signal.
    const bin = join(tmp.path, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'git'), '#!/bin/sh\necho "fatal: out of memory" >&2\nkill -9 $$\n', {
      mode: 0o755,
    });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const err = await rejection(vcs.root(repo));
      expect(err).not.toBeInstanceOf(UserError);
      expect(err.message).toBe(`git rev-parse --show-toplevel failed in ${repo}: fatal: out of memory`);
    } finally {
      process.env.PATH = path;
    }
  });

  it('refuses a repository with no commits', async () => {
    const empty = join(tmp.path, 'empty');
    mkdirSync(empty);
    git(empty, 'init', '-q');
    const err = await rejection(vcs.resolveBase(empty));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toMatch(
      /^the repository at .*empty has no commits yet, so there is no base revision/,
    );
    expect(err.message).toContain('make a first commit');
  });

  it('resolves --rev, naming the branch only when it is a local branch, and refuses an unknown one (even one that looks like an option)', async () => {
    const head = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'tag', 'v1');
    expect(await vcs.resolveBase(repo, 'v1')).toEqual({ sha: head, ref: 'v1', branch: null });
    expect(await vcs.resolveBase(repo, 'main')).toEqual({ sha: head, ref: 'main', branch: 'main' });
    expect(await vcs.resolveBase(repo, 'refs/heads/main')).toEqual({
      sha: head,
      ref: 'refs/heads/main',
      branch: 'main',
    });
    expect(await vcs.resolveBase(repo, head)).toEqual({ sha: head, ref: head, branch: null });
    for (const rev of ['no-such-branch', '--all']) {
      const err = await rejection(vcs.resolveBase(repo, rev));
      expect(err).toBeInstanceOf(UserError);
      expect(err.message).toBe(
        `unknown revision '${rev}' in ${repo}: pass --rev a branch, tag or commit that exists (git log --oneline --all lists them).`,
      );
    }
  });

  it('resolves --rev through one long-lived git, which sees the branch as it is at each call', async () => {
    const own = new GitVcs();
    const trace = join(tmp.path, 'git-trace');
    process.env.GIT_TRACE = trace;
    try {
      const first = git(repo, 'rev-parse', 'HEAD');
      expect(await own.resolveBase(repo, 'main')).toEqual({ sha: first, ref: 'main', branch: 'main' });
      // Moved by a commit, then by a packed ref another process wrote: each read sees it.
      git(repo, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'two');
      const second = git(repo, 'rev-parse', 'HEAD');
      expect(await own.resolveBase(repo, 'main')).toEqual({ sha: second, ref: 'main', branch: 'main' });
      git(repo, 'pack-refs', '--all');
      git(repo, 'update-ref', 'refs/heads/main', first);
      expect(await own.resolveBase(repo, 'main')).toEqual({ sha: first, ref: 'main', branch: 'main' });
      // A tag of a tree names no commit; a name with a line break is not two requests.
      git(repo, 'tag', 'tree-tag', `${first}^{tree}`);
      // Nor does a name git's "<name> missing" reply would read as "<sha> <type> <size>" in.
      for (const rev of ['tree-tag', 'main\nHEAD', 'nope commit 12 x'])
        expect((await rejection(own.resolveBase(repo, rev))).message).toMatch(/^unknown revision/);
    } finally {
      delete process.env.GIT_TRACE;
      own.close();
    }
    // One git for the three reads of main (an unknown revision's look for any commit at all aside).
    const gits = readFileSync(trace, 'utf8')
      .split('\n')
      .filter((l) => /trace: built-in: git (cat-file|rev-parse .*main)/.test(l));
    expect(gits, gits.join('\n')).toHaveLength(1);
  });

  it('takes the branch checked out, whatever its name, else the detached HEAD', async () => {
    const first = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '-q', '-b', 'topic');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'topic work');
    const topic = git(repo, 'rev-parse', 'HEAD');
    expect(await vcs.resolveBase(repo)).toEqual({ sha: topic, ref: 'topic', branch: 'topic' });
    git(repo, 'checkout', '-q', 'main');
    expect(await vcs.resolveBase(repo)).toEqual({ sha: first, ref: 'main', branch: 'main' });
    git(repo, 'checkout', '-q', '--detach', 'topic');
    expect(await vcs.resolveBase(repo)).toEqual({ sha: topic, ref: 'HEAD', branch: null });
  });

  it('refuses a checked-out branch with no commits yet', async () => {
    git(repo, 'checkout', '-q', '--orphan', 'fresh');
    const err = await rejection(vcs.resolveBase(repo));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toBe(
      `the branch fresh checked out in ${repo} has no commits yet, so there is no base revision to start from: commit on it, check out a branch that has commits, or pass --rev.`,
    );
  });

  it("takes the local branch in a clone ahead of its remote, not the remote's default branch", async () => {
    const remote = join(tmp.path, 'remote.git');
    git(tmp.path, 'clone', '-q', '--bare', repo, remote);
    const clone = join(tmp.path, 'clone');
    git(tmp.path, 'clone', '-q', remote, clone);
    const upstream = git(clone, 'rev-parse', 'origin/main');
    expect(git(clone, 'symbolic-ref', 'refs/remotes/origin/HEAD')).toBe('refs/remotes/origin/main');
    git(clone, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'local');
    const local = git(clone, 'rev-parse', 'main');
    expect(local).not.toBe(upstream);
    expect(await vcs.resolveBase(clone)).toEqual({ sha: local, ref: 'main', branch: 'main' });
    // The remote's branch only when asked for.
    expect(await vcs.resolveBase(clone, 'origin/main')).toEqual({
      sha: upstream,
      ref: 'origin/main',
      branch: null,
    });
  });
});

describe('iterations of a change', () => {
  it('replaces the change commit on the branch, keeps every iteration under refs/incrementum, survives gc', async () => {
    const { ws, base } = await workspace();
    expect(await vcs.currentChangeId(ws)).toBeNull();
    const id = await vcs.startChange(ws);
    expect(id).toMatch(/^I[0-9a-f]{40}$/);
    expect(await vcs.currentChangeId(ws)).toBe(id);

    writeFileSync(join(ws, 'a.txt'), 'one\nTWO\nthree\n');
    writeFileSync(join(ws, 'new.txt'), 'new\n');
    writeFileSync(join(ws, '.incrementum-feedback'), 'ACCEPT\n');
    writeFileSync(join(ws, '.incrementum-commit-message'), 'draft\n');
    expect(await vcs.hasChanges(ws)).toBe(true);
    const first = await vcs.commitIteration(ws, 'First try');
    expect(first.change_id).toBe(id);
    expect(first.files).toEqual([
      { path: 'a.txt', status: 'modified', additions: 2, deletions: 1 },
      { path: 'new.txt', status: 'added', additions: 1, deletions: 0 },
    ]);
    expect(git(ws, 'rev-parse', 'HEAD^')).toBe(base);
    expect(readChangeId(git(ws, 'log', '-1', '--format=%B'))).toBe(id);
    expect(await vcs.hasChanges(ws)).toBe(false);

    rmFile(ws, 'new.txt');
    rmFile(ws, 'gone.txt');
    writeFileSync(join(ws, 'b.bin'), Buffer.from([0, 1, 2, 0, 255]));
    const second = await vcs.commitIteration(ws, 'Second try');
    expect(second.change_id).toBe(id);
    // Against the previous iteration, not the base.
    expect(second.files).toEqual([
      { path: 'b.bin', status: 'added', additions: 0, deletions: 0 },
      { path: 'gone.txt', status: 'removed', additions: 0, deletions: 1 },
      { path: 'new.txt', status: 'removed', additions: 0, deletions: 1 },
    ]);
    // One commit on the branch for the change, on the change's parent.
    expect(git(ws, 'rev-parse', 'HEAD^')).toBe(base);
    expect(git(repo, 'rev-parse', 'incrementum/ws-1')).toBe(second.commit_id);

    const final = await vcs.describe(ws, 'Add new things\n\nThe long story.\n');
    const message = git(ws, 'log', '-1', '--format=%B');
    expect(message).toBe(`Add new things\n\nThe long story.\n\nChange-Id: ${id}`);
    expect(git(ws, 'rev-parse', 'HEAD^')).toBe(base);
    expect(git(ws, 'rev-parse', `${final}^{tree}`)).toBe(git(ws, 'rev-parse', `${second.commit_id}^{tree}`));

    // Nothing but the refs keeps iteration 1 alive; the workspace goes too.
    await vcs.removeWorkspace(repo, ws);
    expect(existsSync(ws)).toBe(false);
    git(repo, 'reflog', 'expire', '--expire=now', '--all');
    git(repo, 'gc', '-q', '--prune=now');
    for (const sha of [first.commit_id, second.commit_id, final])
      expect(git(repo, 'cat-file', '-t', sha)).toBe('commit');
    expect(git(repo, 'rev-parse', changeRef(id, 1))).toBe(first.commit_id);
    expect(git(repo, 'rev-parse', changeRef(id, 2))).toBe(second.commit_id);
    expect(git(repo, 'rev-parse', changeRef(id, 'head'))).toBe(final);
    expect(await vcs.changedFiles(repo, first.commit_id, second.commit_id)).toEqual(second.files);
    expect((await vcs.diff(repo, first.commit_id, second.commit_id)).text).toContain('-new');
    // The protocol files never made it into any commit.
    for (const sha of [first.commit_id, second.commit_id, final])
      expect(git(repo, 'ls-tree', '-r', '--name-only', sha)).not.toMatch(/incrementum-/);
  });

  it('squashes commits the agent made itself, protocol files included, onto the change parent', async () => {
    const { ws, base } = await workspace();
    await vcs.startChange(ws);
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', '.incrementum-feedback'), 'ACCEPT\n');
    writeFileSync(join(ws, '.incrementum-commit-message'), 'msg\n');
    writeFileSync(join(ws, 'c.txt'), 'c\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'agent commit 1');
    git(ws, 'commit', '-q', '--allow-empty', '-m', 'agent commit 2');
    writeFileSync(join(ws, 'd.txt'), 'd\n');
    const it1 = await vcs.commitIteration(ws, 'Iteration');
    expect(git(ws, 'rev-parse', 'HEAD^')).toBe(base);
    expect(git(ws, 'ls-tree', '-r', '--name-only', 'HEAD').split('\n').sort()).toEqual([
      'README.md',
      'a.txt',
      'c.txt',
      'd.txt',
      'gone.txt',
    ]);
    expect(it1.files.map((f) => f.path)).toEqual(['c.txt', 'd.txt']);
    // The protocol files are still in the working copy for the runner, untracked.
    expect(readFileSync(join(ws, '.incrementum-commit-message'), 'utf8')).toBe('msg\n');
    expect(await vcs.hasChanges(ws)).toBe(false);
  });

  it('a protocol file the agent commits in a later iteration is taken out too, and the index is left as porcelain would', async () => {
    const { ws, base } = await workspace();
    await vcs.startChange(ws, undefined, base);
    writeFileSync(join(ws, 'c.txt'), 'c\n');
    const it1 = await vcs.commitIteration(ws, 'one');
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', '.incrementum-feedback'), 'ACCEPT\n');
    writeFileSync(join(ws, '.incrementum-commit-message'), 'msg\n');
    writeFileSync(join(ws, 'c.txt'), 'c2\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'agent commit');
    const it2 = await vcs.commitIteration(ws, 'two');
    expect(git(ws, 'rev-parse', 'HEAD^')).toBe(base);
    expect(git(ws, 'ls-tree', '-r', '--name-only', 'HEAD')).not.toMatch(/incrementum-/);
    expect(it2.files).toEqual([{ path: 'c.txt', status: 'modified', additions: 1, deletions: 1 }]);
    expect(await new GitVcs().changedFiles(ws, it1.commit_id, it2.commit_id)).toEqual(it2.files);
    // What git status says after it: only the protocol files, untracked.
    expect(git(ws, 'status', '--porcelain', '--untracked-files=all').split('\n').sort()).toEqual([
      '?? .incrementum-commit-message',
      '?? sub/.incrementum-feedback',
    ]);
  });

  it('iterations another process recorded meanwhile are not overwritten: the next one is numbered after them', async () => {
    const { ws, base } = await workspace();
    const mine = new GitVcs();
    const id = await mine.startChange(ws, undefined, base);
    writeFileSync(join(ws, 'a.txt'), '1\n');
    const one = await mine.commitIteration(ws, 'one');
    writeFileSync(join(ws, 'a.txt'), '2\n');
    const two = await new GitVcs().commitIteration(ws, 'two');
    writeFileSync(join(ws, 'a.txt'), '3\n');
    const three = await mine.commitIteration(ws, 'three');
    expect(git(ws, 'rev-parse', changeRef(id, 1))).toBe(one.commit_id);
    expect(git(ws, 'rev-parse', changeRef(id, 2))).toBe(two.commit_id);
    expect(git(ws, 'rev-parse', changeRef(id, 3))).toBe(three.commit_id);
    // Against iteration 2, the one before it.
    expect(three.files).toEqual([{ path: 'a.txt', status: 'modified', additions: 1, deletions: 1 }]);
    expect(git(ws, 'rev-parse', changeRef(id, 'head'))).toBe(three.commit_id);
    // The branch's reflog says incrementum moved it (not which iteration: the
    // long-lived update-ref takes one message, when it starts).
    expect(git(ws, 'reflog', '-1', '--format=%gs', 'incrementum/ws-1')).toBe('incrementum');
  });

  it('the file lists it remembers (after describe too) are the ones git diff gives', async () => {
    const { ws, base } = await workspace();
    await vcs.startChange(ws, undefined, base);
    writeFileSync(join(ws, 'a.txt'), 'one\nTWO\n');
    writeFileSync(join(ws, 'tab\tname.txt'), 'x\n');
    const one = await vcs.commitIteration(ws, 'one');
    writeFileSync(join(ws, 'b.bin'), Buffer.from([0, 1, 2, 0, 255]));
    rmFile(ws, 'gone.txt');
    execFileSync('chmod', ['+x', join(ws, 'README.md')]);
    const two = await vcs.commitIteration(ws, 'two');
    const final = await vcs.describe(ws, 'Final\n');
    const fresh = new GitVcs();
    for (const [from, to] of [
      [base, one.commit_id],
      [one.commit_id, two.commit_id],
      [base, two.commit_id],
      [base, final],
      [one.commit_id, final],
    ] as const)
      expect(await vcs.changedFiles(ws, from, to)).toEqual(await fresh.changedFiles(ws, from, to));
    expect((await vcs.changedFiles(ws, base, final)).map((f) => f.path)).toEqual([
      'README.md',
      'a.txt',
      'b.bin',
      'gone.txt',
      'tab\tname.txt',
    ]);
  });

  it('a second change builds on the first and gets its own id', async () => {
    const { ws, base } = await workspace();
    const one = await vcs.startChange(ws);
    writeFileSync(join(ws, 'one.txt'), '1\n');
    await vcs.commitIteration(ws, 'one');
    const c1 = await vcs.describe(ws, 'Change one');
    const two = await vcs.startChange(ws);
    expect(two).not.toBe(one);
    writeFileSync(join(ws, 'two.txt'), '2\n');
    const it = await vcs.commitIteration(ws, 'two');
    expect(git(ws, 'rev-parse', 'HEAD^')).toBe(c1);
    expect(it.files.map((f) => f.path)).toEqual(['two.txt']);
    const log = await vcs.log(ws, base, 'HEAD');
    expect(log.map((e) => e.subject)).toEqual(['Change one', 'two']);
    expect(log[0]!.sha).toBe(c1);
    expect(log[0]!.time).toBeGreaterThan(1_600_000_000);
  });

  it('changed files: names with tabs, spaces, colons and non-ASCII come through whole', async () => {
    const { ws } = await workspace();
    await vcs.startChange(ws);
    const names = [':odd', 'tab\tname', 'sp ace', 'héllo.txt', 'sub/:M'];
    mkdirSync(join(ws, 'sub'));
    for (const n of names) writeFileSync(join(ws, n), 'x\ny\n');
    const first = await vcs.commitIteration(ws, 'names');
    expect(first.files).toEqual(
      [...names].sort().map((path) => ({ path, status: 'added', additions: 2, deletions: 0 })),
    );
    writeFileSync(join(ws, 'tab\tname'), 'x\n');
    rmFile(ws, ':odd');
    const second = await vcs.commitIteration(ws, 'names again');
    expect(second.files).toEqual([
      { path: ':odd', status: 'removed', additions: 0, deletions: 2 },
      { path: 'tab\tname', status: 'modified', additions: 0, deletions: 1 },
    ]);
    expect(await vcs.changedFiles(ws, first.commit_id, first.commit_id)).toEqual([]);
  });

  it('changed files and the diff: names that are not UTF-8 keep their bytes, so two never look alike', async () => {
    const { ws } = await workspace();
    await vcs.startChange(ws);
    // bad-<0xff>.txt and bad-<0xfe>.txt: valid file names on Linux, not UTF-8, and a Latin-1 line.
    const name = (b: number) => Buffer.concat([Buffer.from('bad-'), Buffer.from([b]), Buffer.from('.txt')]);
    const at = (b: number) => Buffer.concat([Buffer.from(`${ws}/`), name(b)]);
    writeFileSync(at(0xff), 'x\n');
    writeFileSync(at(0xfe), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const it1 = await vcs.commitIteration(ws, 'bytes');
    expect(it1.files.map((f) => f.path)).toEqual(['bad-\udcfe.txt', 'bad-\udcff.txt']);
    expect(it1.files.map((f) => f.additions)).toEqual([1, 1]);
    const diff = await vcs.diff(ws, (await vcs.resolveBase(repo)).sha, it1.commit_id);
    expect(diff.text).toContain('+++ b/bad-\udcfe.txt');
    expect(diff.text).toContain('+++ b/bad-\udcff.txt');
    expect(diff.text).toContain('+caf\udce9');
  });

  it("keeps the change id in the worktree's own git dir, found from a subfolder too", async () => {
    const { ws } = await workspace();
    const id = await vcs.startChange(ws);
    const gitDir = git(ws, 'rev-parse', '--absolute-git-dir');
    expect(gitDir).not.toBe(git(repo, 'rev-parse', '--absolute-git-dir'));
    expect(readFileSync(join(gitDir, 'incrementum-change'), 'utf8')).toBe(`${id}\n`);
    mkdirSync(join(ws, 'deep'));
    expect(await vcs.currentChangeId(join(ws, 'deep'))).toBe(id);
    expect(await vcs.currentChangeId(repo)).toBeNull();
  });

  it('log keeps a subject with pipes whole, oldest first', async () => {
    const { ws, base } = await workspace();
    git(ws, 'commit', '-q', '--allow-empty', '-m', 'a | b | c');
    git(ws, 'commit', '-q', '--allow-empty', '-m', 'second');
    const log = await vcs.log(ws, base, 'HEAD');
    expect(log.map((e) => e.subject)).toEqual(['a | b | c', 'second']);
    expect(await vcs.log(ws, 'HEAD', 'HEAD')).toEqual([]);
  });
});

describe('workspaces', () => {
  it('reset makes a used workspace clean at the new base and forgets the change', async () => {
    const { ws, base } = await workspace();
    await vcs.startChange(ws);
    writeFileSync(join(ws, 'x.txt'), 'x\n');
    await vcs.commitIteration(ws, 'x');
    writeFileSync(join(ws, 'untracked.txt'), 'u\n');
    writeFileSync(join(ws, '.env'), 'SECRET=1\n');
    writeFileSync(join(ws, 'a.txt'), 'dirty\n');
    await vcs.resetWorkspace(ws, 'incrementum/ws-1', base);
    expect(await vcs.head(ws)).toBe(base);
    expect(await vcs.currentChangeId(ws)).toBeNull();
    expect(git(ws, 'status', '--porcelain', '--ignored')).toBe('');
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('reset leaves no merge of the last job under way, nor what it staged', async () => {
    const { ws, base } = await workspace();
    const ours = git(ws, 'symbolic-ref', '--short', 'HEAD');
    git(ws, 'checkout', '-q', '-b', 'side');
    writeFileSync(join(ws, 'a.txt'), 'side\n');
    git(ws, 'commit', '-qam', 'side');
    git(ws, 'checkout', '-q', ours);
    writeFileSync(join(ws, 'a.txt'), 'ours\n');
    git(ws, 'commit', '-qam', 'ours');
    expect(() => git(ws, 'merge', 'side')).toThrow(); // a conflict: the merge stays under way
    expect(existsSync(join(git(ws, 'rev-parse', '--git-dir'), 'MERGE_HEAD'))).toBe(true);
    writeFileSync(join(ws, 'staged.txt'), 's\n');
    git(ws, 'add', 'staged.txt');
    await vcs.resetWorkspace(ws, ours, base);
    expect(await vcs.head(ws)).toBe(base);
    expect(git(ws, 'symbolic-ref', '--short', 'HEAD')).toBe(ours);
    expect(existsSync(join(git(ws, 'rev-parse', '--git-dir'), 'MERGE_HEAD'))).toBe(false);
    expect(git(ws, 'status', '--porcelain', '--ignored')).toBe('');
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it("never moves the branch an agent pointed the workspace's HEAD or its branch at (the user's main)", async () => {
    const main = git(repo, 'rev-parse', 'main');
    for (const [n, how] of [
      [3, 'head'],
      [4, 'branch-file'],
      [5, 'branch-link'],
    ] as const) {
      const base = (await vcs.resolveBase(repo)).sha;
      const ws = join(tmp.path, 'state', 'workspaces', 'repo', String(n));
      const branch = `incrementum/workspace-${n}/work`;
      await vcs.addWorkspace(repo, ws, branch, base);
      await vcs.startChange(ws);
      writeFileSync(join(ws, 'x.txt'), 'x\n');
      // What an agent can write inside the sandbox: the worktree's HEAD, or its branch's own file.
      const target =
        how === 'head'
          ? join(git(ws, 'rev-parse', '--absolute-git-dir'), 'HEAD')
          : join(repo, '.git', 'refs', 'heads', ...branch.split('/'));
      // Or that file a symbolic link naming main, which git takes for a symbolic ref.
      if (how === 'branch-link') {
        rmSync(target);
        symlinkSync('refs/heads/main', target);
      } else writeFileSync(target, 'ref: refs/heads/main\n');
      // A link is refused before any git runs there (the link check); a ref text by the HEAD guard.
      const refused = how === 'branch-link' ? 'is no longer a regular file' : 'no longer on its own branch';
      const err = await rejection(vcs.commitIteration(ws, 'evil'));
      expect(err.message, how).toContain(refused);
      expect(git(repo, 'rev-parse', 'main'), how).toBe(main);
      const described = await rejection(vcs.describe(ws, 'evil'));
      expect(described.message, how).toContain(refused);
      expect(git(repo, 'rev-parse', 'main'), how).toBe(main);
      // Reset puts the workspace back on its own branch, main untouched.
      await vcs.resetWorkspace(ws, branch, base);
      expect(git(ws, 'symbolic-ref', 'HEAD'), how).toBe(`refs/heads/${branch}`);
      expect(git(repo, 'rev-parse', 'main'), how).toBe(main);
    }
  });

  it("a workspace branch's ref lock a killed git left is cleared when the workspace is made or reset, once it is old enough to be no live git's", async () => {
    const base = (await vcs.resolveBase(repo)).sha;
    const branch = 'incrementum/workspace-1/work';
    const lock = join(repo, '.git', 'refs', 'heads', 'incrementum', 'workspace-1', 'work.lock');
    const leave = (ageMs: number) => {
      mkdirSync(join(lock, '..'), { recursive: true });
      writeFileSync(lock, '');
      const t = (Date.now() - ageMs) / 1000;
      utimesSync(lock, t, t);
    };
    const ws = join(tmp.path, 'state', 'workspaces', 'repo', '1');
    // A young lock that goes (a live git's, done): the workspace is made once
    // it has gone. It stays past withLockRetry's tries (about half a second),
    // and its time is an hour ahead, so it never ages into a stale one the
    // guard would clear: only the guard seeing it gone makes the workspace.
    leave(-3_600_000);
    const goes = setTimeout(() => rmSync(lock), 2_000);
    await vcs.addWorkspace(repo, ws, branch, base);
    clearTimeout(goes);
    expect(git(ws, 'symbolic-ref', '--short', 'HEAD')).toBe(branch);
    await vcs.removeWorkspace(repo, ws);
    // A young lock that stays (a runner SIGKILLed a moment ago, as it made
    // the workspace): waited for until it is old enough, then cleared, and
    // the workspace made. It failed the next job there before.
    leave(0);
    await vcs.addWorkspace(repo, ws, branch, base);
    expect(existsSync(lock)).toBe(false);
    expect(git(ws, 'symbolic-ref', '--short', 'HEAD')).toBe(branch);
    await vcs.removeWorkspace(repo, ws);
    // One a killed git left long ago: cleared at once.
    leave(60_000);
    await vcs.addWorkspace(repo, ws, branch, base);
    expect(git(ws, 'symbolic-ref', '--short', 'HEAD')).toBe(branch);
    expect(existsSync(lock)).toBe(false);
    leave(60_000);
    await vcs.resetWorkspace(ws, branch, base);
    expect(existsSync(lock)).toBe(false);
    // Never a lock of a branch that is not a workspace's.
    git(repo, 'branch', 'feature/x');
    const userLock = join(repo, '.git', 'refs', 'heads', 'feature', 'x.lock');
    writeFileSync(userLock, '');
    utimesSync(userLock, (Date.now() - 60_000) / 1000, (Date.now() - 60_000) / 1000);
    await rejection(vcs.resetWorkspace(ws, 'feature/x', base));
    expect(existsSync(userLock)).toBe(true);
  });

  it("reset moves a workspace of an earlier version's naming to today's branch and deletes the old one", async () => {
    const { ws, base } = await workspace(); // on incrementum/ws-1, as earlier versions named it
    git(repo, 'branch', 'incrementum/ws-2', base); // another workspace's: not this one's to delete
    await vcs.resetWorkspace(ws, 'incrementum/workspace-1/work', base);
    expect(git(ws, 'symbolic-ref', '--short', 'HEAD')).toBe('incrementum/workspace-1/work');
    expect(git(repo, 'branch', '--list', 'incrementum/*')).toBe(
      '+ incrementum/workspace-1/work\n  incrementum/ws-2',
    );
    // Reset again on the same branch: nothing else is deleted.
    await vcs.resetWorkspace(ws, 'incrementum/workspace-1/work', base);
    expect(git(ws, 'symbolic-ref', '--short', 'HEAD')).toBe('incrementum/workspace-1/work');
  });

  it('hasChanges ignores the protocol files alone', async () => {
    const { ws } = await workspace();
    writeFileSync(join(ws, '.incrementum-feedback'), 'ACCEPT\n');
    expect(await vcs.hasChanges(ws)).toBe(false);
    writeFileSync(join(ws, 'y.txt'), 'y\n');
    expect(await vcs.hasChanges(ws)).toBe(true);
  });
});

function rmFile(dir: string, name: string) {
  execFileSync('rm', [join(dir, name)]);
}
