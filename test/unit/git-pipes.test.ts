// GitVcs's long-lived git processes (src/vcs/git-pipe.ts, git-batch.ts): a
// job's HEAD reads, ref transactions, file lists, trees and commits go through
// five git processes per workspace, real ones here. They run outside the workspace,
// start again when killed, end when the workspace is released, and what
// describe writes through them is what `git commit --amend` wrote.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { GitVcs } from '../../src/vcs/git.js';
import { runningWith } from '../helpers/procs.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let vcs: GitVcs;
beforeEach(() => {
  tmp = tempDir('ii-gitpipes-');
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'README.md': '# test\n' });
  vcs = new GitVcs();
});
afterEach(() => {
  vcs.close();
  tmp.cleanup();
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

async function workspace(): Promise<{ ws: string; base: string }> {
  const base = (await vcs.resolveBase(repo)).sha;
  const ws = join(tmp.path, 'state', 'workspaces', 'repo', '1');
  await vcs.addWorkspace(repo, ws, 'incrementum/ws-1', base);
  return { ws, base };
}

/** The live long-lived git processes of this test's repository (they name its worktree git dir). */
const pipes = () => runningWith(`--git-dir=${realpathSync(repo)}/.git/worktrees/`);

it('reads, ref writes, file lists, trees and commits go through five git processes, outside the workspace, started again when killed, ended on release', async () => {
  const { ws, base } = await workspace();
  await vcs.startChange(ws, undefined, base);
  writeFileSync(join(ws, 'a.txt'), 'a\n');
  const one = await vcs.commitIteration(ws, 'one');
  expect(await vcs.head(ws)).toBe(one.commit_id);
  const running = pipes();
  // cat-file, update-ref, diff-tree, mktree; the first commit is commit-tree's, which shows who commits here.
  expect(running).toHaveLength(4);
  // None works in a folder of the job's: the sweep of what a job left running never meets them.
  for (const pid of running) expect(readlinkSync(`/proc/${pid}/cwd`)).toBe('/');

  // Killed (as a Ctrl-C in the terminal would): the next iteration starts them again.
  for (const pid of running) process.kill(pid, 'SIGKILL');
  await waitFor(() => pipes().length === 0, 'the killed processes to be gone');
  writeFileSync(join(ws, 'a.txt'), 'a, better\n');
  const two = await vcs.commitIteration(ws, 'two');
  expect(two.files).toEqual([{ path: 'a.txt', status: 'modified', additions: 1, deletions: 1 }]);
  expect(await vcs.head(ws)).toBe(two.commit_id);
  expect(git(ws, 'rev-parse', 'HEAD')).toBe(two.commit_id);
  // The second commit is written by hash-object, as commit-tree would have: its author and committer.
  // update-ref, diff-tree, mktree and hash-object: HEAD, a commit this instance made, is read from its
  // files, so cat-file is not started again.
  expect(pipes()).toHaveLength(4);
  const who = (rev: string) => git(ws, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%P|%T', rev);
  expect(who(two.commit_id).split('|').slice(0, 3)).toEqual([
    ...who(one.commit_id).split('|').slice(0, 2),
    base,
  ]);
  expect(git(ws, 'log', '-1', '--format=%B', two.commit_id)).toMatch(/^two\n\nChange-Id: I[0-9a-f]{40}$/);
  git(ws, 'fsck', '--no-dangling', '--strict');

  vcs.release(ws);
  await waitFor(() => pipes().length === 0, 'no long-lived git left after release');
});

it('a ref HEAD moved by another git meanwhile is read afresh, not from what the process read before', async () => {
  const { ws, base } = await workspace();
  expect(await vcs.head(ws)).toBe(base);
  git(ws, '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'agent');
  expect(await vcs.head(ws)).toBe(git(ws, 'rev-parse', 'HEAD'));
  expect(await vcs.head(ws)).not.toBe(base);
});

it("describe writes what git commit --amend --only --cleanup=whitespace wrote: the iteration's tree, parent and author, the message cleaned", async () => {
  const { ws, base } = await workspace();
  const id = await vcs.startChange(ws, undefined, base);
  writeFileSync(join(ws, 'a.txt'), 'a\n');
  const it1 = await vcs.commitIteration(ws, 'draft');
  // Something staged is not the describe's business (--only).
  writeFileSync(join(ws, 'staged.txt'), 'not in the commit\n');
  git(ws, 'add', 'staged.txt');
  const message = '\n\nfeat: a  \n\n\n\nbody line\t\n\n';
  // What porcelain writes, on a copy of the same commit in a scratch clone.
  const scratch = join(tmp.path, 'scratch');
  git(tmp.path, 'clone', '-q', repo, scratch);
  git(scratch, 'fetch', '-q', repo, it1.commit_id);
  git(scratch, 'reset', '-q', '--hard', it1.commit_id);
  execFileSync(
    'git',
    ['commit', '-q', '--amend', '--only', '--allow-empty', '--no-verify', '--cleanup=whitespace', '-F', '-'],
    {
      cwd: scratch,
      input: `${message.trimEnd()}\n\nChange-Id: ${id}\n`,
      env: { ...process.env, GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' },
    },
  );
  const sha = await vcs.describe(ws, message);
  const fields = (cwd: string, rev: string) =>
    git(cwd, 'log', '-1', '--format=%T%n%P%n%an <%ae> %ad%n%B', '--date=raw', rev);
  expect(fields(ws, sha)).toBe(fields(scratch, 'HEAD'));
  expect(git(ws, 'log', '-1', '--format=%B', sha)).toBe(`feat: a\n\nbody line\n\nChange-Id: ${id}`);
  expect(git(ws, 'rev-parse', 'HEAD')).toBe(sha);
  expect(git(ws, 'rev-parse', `refs/incrementum/changes/${id}/head`)).toBe(sha);
  expect(git(ws, 'diff', '--cached', '--name-only')).toBe('staged.txt');
  expect(readFileSync(join(ws, 'staged.txt'), 'utf8')).toBe('not in the commit\n');
});

it('where git finds no committer identity, every commit (commit-tree, then hash-object) is made as incrementum', async () => {
  const { ws, base } = await workspace();
  git(repo, 'config', '--unset', 'user.name');
  git(repo, 'config', '--unset', 'user.email');
  git(repo, 'config', 'user.useConfigOnly', 'true');
  const keys = [
    'GIT_CONFIG_GLOBAL',
    'GIT_CONFIG_NOSYSTEM',
    'GIT_AUTHOR_NAME',
    'GIT_AUTHOR_EMAIL',
    'GIT_COMMITTER_NAME',
    'GIT_COMMITTER_EMAIL',
    'EMAIL',
  ];
  const saved = keys.map((k) => [k, process.env[k]] as const);
  for (const k of keys) delete process.env[k];
  Object.assign(process.env, { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' });
  try {
    await vcs.startChange(ws, undefined, base);
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    const one = await vcs.commitIteration(ws, 'one');
    writeFileSync(join(ws, 'a.txt'), 'b\n');
    const two = await vcs.commitIteration(ws, 'two');
    const sha = await vcs.describe(ws, 'final');
    for (const c of [one.commit_id, two.commit_id, sha])
      expect(git(ws, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', c)).toBe(
        'incrementum <incrementum@localhost>|incrementum <incrementum@localhost>',
      );
  } finally {
    for (const [k, v] of saved)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
});

it("warm starts a workspace's reader and ref writer before any request, changing nothing; the first change then starts no git for them", async () => {
  const { ws, base } = await workspace();
  const refsBefore = git(repo, 'for-each-ref');
  expect(pipes()).toHaveLength(0);
  await vcs.warm(ws);
  const warmed = pipes();
  // cat-file and update-ref, nothing else, and no ref written.
  expect(warmed).toHaveLength(2);
  expect(git(repo, 'for-each-ref')).toBe(refsBefore);
  expect(await vcs.head(ws)).toBe(base);
  await vcs.startChange(ws, undefined, base);
  expect(pipes()).toEqual(warmed);
  vcs.release(ws);
  await waitFor(() => pipes().length === 0, 'the warmed processes to end on release');
});
