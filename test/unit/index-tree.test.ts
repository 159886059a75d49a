// The trees an iteration records, computed from the index file
// (src/vcs/index-tree.ts) in place of a `git write-tree` process: the same
// ids git's write-tree gives, on real indexes git wrote, and write-tree
// itself wherever the index is not the plain case.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { GitVcs, readIndex } from '../../src/vcs/git.js';
import { treesOfIndex } from '../../src/vcs/index-tree.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
beforeEach(() => {
  tmp = tempDir('ii-indextree-');
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'README.md': '# test\n' });
});
afterEach(() => tmp.cleanup());

/** The test's own git, left out of the trace GitVcs's gits write (GIT_TRACE below). */
const quiet = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'GIT_TRACE'));
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: quiet(), encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] }).trim();
const gitIn = (cwd: string, input: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    env: quiet(),
    input,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
  }).trim();

/** Files whose names sort apart in a tree and in a plain byte order ("a.b", "a/", "a-b", "a0"), nested folders, modes. */
function awkwardFiles(dir: string): void {
  mkdirSync(join(dir, 'a', 'deep', 'er'), { recursive: true });
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'a', 'x'), 'x\n');
  writeFileSync(join(dir, 'a', 'deep', 'er', 'y'), 'y\n');
  writeFileSync(join(dir, 'a.b'), 'ab\n');
  writeFileSync(join(dir, 'a-b'), 'a-b\n');
  writeFileSync(join(dir, 'a0'), 'a0\n');
  writeFileSync(join(dir, 'src', 'run.sh'), '#!/bin/sh\n');
  chmodSync(join(dir, 'src', 'run.sh'), 0o755);
  symlinkSync('a/x', join(dir, 'link'));
  writeFileSync(join(dir, 'with space and\nnewline'), 's\n');
  // A name that is not UTF-8: its bytes go to git as they are.
  writeFileSync(Buffer.from([...Buffer.from(join(dir, 'raw-')), 0xff, 0xfe]), 'raw\n');
}

const index = (dir: string) => readFileSync(join(dir, '.git', 'index'));

it("gives write-tree's ids, for every tree, on an index git wrote (folders, names that sort apart, modes, links, a submodule, bytes not UTF-8)", () => {
  awkwardFiles(repo);
  git(repo, 'add', '--all');
  // A submodule's commit, as git records it (a gitlink): its commit need not be in this repository.
  git(repo, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},sub/module`);
  const computed = treesOfIndex(index(repo), 20);
  expect(computed).not.toBeNull();
  expect(computed!.root).toBe(git(repo, 'write-tree'));
  // Every folder's tree, as git has it now.
  const trees = git(repo, 'ls-tree', '-r', '-t', '-z', computed!.root)
    .split('\0')
    .filter((l) => l.includes(' tree '))
    .map((l) => l.split(/\s/)[2]);
  expect(new Set(computed!.trees.map((t) => t.sha))).toEqual(new Set([computed!.root, ...trees]));
  // Subtrees come before the trees holding them: the root last.
  expect(computed!.trees.at(-1)!.sha).toBe(computed!.root);
});

it("gives write-tree's id in a SHA-256 repository", () => {
  const other = join(tmp.path, 'sha256');
  mkdirSync(other);
  git(other, 'init', '-q', '--object-format=sha256');
  awkwardFiles(other);
  git(other, 'add', '--all');
  const computed = treesOfIndex(index(other), 32);
  expect(computed?.root).toMatch(/^[0-9a-f]{64}$/);
  expect(computed!.root).toBe(git(other, 'write-tree'));
});

it('gives null, for write-tree to run, where the index is not the plain case', () => {
  writeFileSync(join(repo, 'b.txt'), 'b\n');
  git(repo, 'add', 'b.txt');
  expect(treesOfIndex(index(repo), 20)).not.toBeNull();
  // Intent to add: write-tree leaves the entry out.
  writeFileSync(join(repo, 'later.txt'), 'later\n');
  git(repo, 'add', '-N', 'later.txt');
  expect(treesOfIndex(index(repo), 20)).toBeNull();
  git(repo, 'add', 'later.txt');
  expect(treesOfIndex(index(repo), 20)).not.toBeNull();
  // Version 4 (paths compressed), a split index.
  git(repo, 'update-index', '--index-version', '4');
  expect(treesOfIndex(index(repo), 20)).toBeNull();
  git(repo, 'update-index', '--index-version', '2');
  expect(treesOfIndex(index(repo), 20)).not.toBeNull();
  git(repo, 'update-index', '--split-index');
  expect(treesOfIndex(index(repo), 20)).toBeNull();
  git(repo, 'update-index', '--no-split-index');
  expect(treesOfIndex(index(repo), 20)).not.toBeNull();
  // A conflict (entries at stages 1-3): write-tree refuses it, and says why.
  const blob = gitIn(repo, 'c\n', 'hash-object', '-w', '--stdin');
  gitIn(repo, [1, 2, 3].map((s) => `100644 ${blob} ${s}\tc.txt\n`).join(''), 'update-index', '--index-info');
  expect(treesOfIndex(index(repo), 20)).toBeNull();
  // Not an index at all, or cut short.
  expect(treesOfIndex(Buffer.from('not an index'), 20)).toBeNull();
  git(repo, 'update-index', '--force-remove', 'c.txt');
  const whole = index(repo);
  expect(treesOfIndex(whole, 20)).not.toBeNull();
  expect(treesOfIndex(whole.subarray(0, whole.length - 30), 20)).toBeNull();
});

async function workspace(vcs: GitVcs): Promise<{ ws: string; base: string }> {
  const base = (await vcs.resolveBase(repo)).sha;
  const ws = join(tmp.path, 'state', 'workspaces', 'repo', '1');
  await vcs.addWorkspace(repo, ws, 'incrementum/ws-1', base);
  await vcs.startChange(ws, undefined, base);
  return { ws, base };
}

it('an iteration records the tree write-tree would, its new trees written to the store, and no write-tree process', async () => {
  const vcs = new GitVcs();
  try {
    const { ws } = await workspace(vcs);
    awkwardFiles(ws);
    const one = await vcs.commitIteration(ws, 'one');
    const tree = git(ws, 'rev-parse', `${one.commit_id}^{tree}`);
    // Every object the commit names is there, before write-tree below could write any of them.
    git(ws, 'fsck', '--no-dangling', '--strict', '--full');
    expect(tree).toBe(git(ws, 'write-tree'));
    expect(one.files.map((f) => f.path).sort()).toContain('a/deep/er/y');
    // A second iteration changes one deep file: the trees on its path are new, the others known.
    writeFileSync(join(ws, 'a', 'deep', 'er', 'y'), 'y, better\n');
    const two = await vcs.commitIteration(ws, 'two');
    git(ws, 'fsck', '--no-dangling', '--strict', '--full');
    expect(git(ws, 'rev-parse', `${two.commit_id}^{tree}`)).toBe(git(ws, 'write-tree'));
    expect(two.files).toEqual([{ path: 'a/deep/er/y', status: 'modified', additions: 1, deletions: 1 }]);
    // None of it ran write-tree: no process of it was ever in the trace.
    expect(processesSeen()).not.toContain('write-tree');
  } finally {
    vcs.close();
  }
});

it('an index git writes as version 4 is recorded through write-tree, with the same tree', async () => {
  const vcs = new GitVcs();
  try {
    const { ws } = await workspace(vcs);
    git(ws, 'update-index', '--index-version', '4');
    awkwardFiles(ws);
    const one = await vcs.commitIteration(ws, 'one');
    expect(git(ws, 'rev-parse', `${one.commit_id}^{tree}`)).toBe(git(ws, 'write-tree'));
    expect(processesSeen()).toContain('write-tree');
    git(ws, 'fsck', '--no-dangling', '--strict', '--full');
  } finally {
    vcs.close();
  }
});

// GIT_TRACE to a file in the test's folder: which git commands this process's GitVcs ran.
let trace = '';
beforeEach(() => {
  trace = join(tmp.path, 'git-trace');
  writeFileSync(trace, '');
  process.env.GIT_TRACE = trace;
});
afterEach(() => {
  delete process.env.GIT_TRACE;
});
const processesSeen = () =>
  readFileSync(trace, 'utf8')
    .split('\n')
    .filter((l) => l.includes('trace: built-in: git'))
    .join('\n');

it("reads the index only as a regular file of its own: a symlink to /dev/zero or a FIFO the agent's shell put there is left to write-tree", () => {
  const file = join(tmp.path, 'index');
  writeFileSync(file, 'DIRC');
  expect(readIndex(file)?.toString()).toBe('DIRC');
  const zero = join(tmp.path, 'zero');
  symlinkSync('/dev/zero', zero);
  expect(readIndex(zero)).toBeNull();
  const fifo = join(tmp.path, 'fifo');
  execFileSync('mkfifo', [fifo]);
  expect(readIndex(fifo)).toBeNull();
});
