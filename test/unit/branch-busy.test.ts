// branchBusy on real repositories: what git is in the middle of on a branch,
// in the main checkout or a linked worktree, and what does not count (another
// branch's rebase, a stopped landing's rebase of a detached HEAD).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const vcs = new GitVcs();
const branchBusy = (root: string, branch: string) => vcs.branchBusy(root, branch);

let tmp: ReturnType<typeof tempDir>;
let repo: string;
beforeEach(() => {
  tmp = tempDir('ii-busy-');
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'a.txt': 'base\n' });
});
afterEach(() => tmp.cleanup());

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
/** git that is expected to stop (a conflict): its exit is not checked. */
const gitStops = (cwd: string, ...args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8' });
const commit = (cwd: string, file: string, body: string) => {
  writeFileSync(join(cwd, file), body);
  git(cwd, 'add', file);
  git(cwd, 'commit', '-qm', `${file}: ${body.trim()}`);
};

/** main and side both change a.txt: picking, reverting or merging one onto the other stops. */
function diverged(): void {
  git(repo, 'checkout', '-q', '-b', 'side');
  commit(repo, 'a.txt', 'side\n');
  git(repo, 'checkout', '-q', 'main');
  commit(repo, 'a.txt', 'main\n');
}

describe('branchBusy', () => {
  it('is null for a branch nothing is in progress on, checked out or not', async () => {
    git(repo, 'branch', 'other');
    expect(await branchBusy(repo, 'main')).toBeNull();
    expect(await branchBusy(repo, 'other')).toBeNull();
  });

  it('names a stopped cherry-pick and revert on the branch checked out', async () => {
    diverged();
    expect(gitStops(repo, 'cherry-pick', 'side').status).not.toBe(0);
    expect(await branchBusy(repo, 'main')).toEqual({ state: 'cherry-pick', worktree: repo });
    expect(await branchBusy(repo, 'side')).toBeNull();
    git(repo, 'cherry-pick', '--abort');

    commit(repo, 'a.txt', 'main again\n');
    expect(gitStops(repo, 'revert', '--no-edit', 'HEAD~1').status).not.toBe(0);
    expect(await branchBusy(repo, 'main')).toEqual({ state: 'revert', worktree: repo });
    git(repo, 'revert', '--abort');
    expect(await branchBusy(repo, 'main')).toBeNull();
  });

  it("does not count another branch's rebase, nor a rebase of a detached HEAD (a stopped landing's)", async () => {
    diverged();
    // A rebase of side stopped on a conflict, in the main checkout.
    git(repo, 'checkout', '-q', 'side');
    expect(gitStops(repo, 'rebase', 'main').status).not.toBe(0);
    expect(await branchBusy(repo, 'side')).toEqual({ state: 'rebase', worktree: repo });
    expect(await branchBusy(repo, 'main')).toBeNull();
    git(repo, 'rebase', '--abort');

    // A detached worktree stopped in a rebase, as ii job land --stop-on-conflict leaves one.
    const landing = join(tmp.path, 'landing');
    git(repo, 'worktree', 'add', '-q', '--detach', landing, 'side');
    expect(gitStops(landing, 'rebase', 'main').status).not.toBe(0);
    expect(await branchBusy(repo, 'main')).toBeNull();
    expect(await branchBusy(repo, 'side')).toBeNull();
  });

  it('names the linked worktree a merge is stopped in', async () => {
    diverged();
    git(repo, 'checkout', '-q', '--detach');
    const wt = join(tmp.path, 'linked');
    git(repo, 'worktree', 'add', '-q', wt, 'main');
    expect(gitStops(wt, 'merge', 'side').status).not.toBe(0);
    expect(await branchBusy(repo, 'main')).toEqual({ state: 'merge', worktree: wt });
  });
});
