// A workspace record this machine did not make is never acted on here. In a
// shared store another machine writes jobs, sessions and workspace records;
// one taken over can write a job that says it ran on this host with a dead
// pid (so ii job list, ii todo list, the board or ii run here clean it up as
// a dead runner's), its workspace path naming the user's own linked
// worktree, or their home. The cleanup reset that worktree (checkout -B,
// reset --hard, clean -ffdx: their uncommitted and untracked work gone, their
// branch moved) and ended every process working under the path.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanUpDeadRunner } from '../../src/job/dead-runner.js';
import { hostName } from '../../src/proc/host.js';
import { finishSession } from '../../src/session/session.js';
import { pruneWorkspaces } from '../../src/session/workspaces.js';
import { workspaceBranch } from '../../src/model/workspace-branch.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { openStateStore } from '../../src/state/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let feature: string;
let store: AsyncStateStore;
let base: string;
beforeEach(() => {
  tmp = tempDir();
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'a.txt': 'one\n' });
  base = git(repo, 'rev-parse', 'HEAD');
  writeFileSync(join(repo, 'b.txt'), 'two\n');
  git(repo, 'add', 'b.txt');
  git(repo, '-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-qm', 'two');
  // The user's own linked worktree, with work not yet committed.
  feature = join(tmp.path, 'feature');
  git(repo, 'worktree', 'add', '-q', '-b', 'feature', feature);
  writeFileSync(join(feature, 'a.txt'), 'edited, not committed\n');
  writeFileSync(join(feature, 'notes.txt'), 'untracked\n');
  store = asyncStore(openStateStore({ dir: join(tmp.path, 'state') }));
});
afterEach(async () => {
  await store.close();
  tmp.cleanup();
});

/** A session and its workspace record as another machine wrote them, naming `path`. */
async function foreignSession(path: string, branch: string): Promise<{ sessionId: string; todoId: string }> {
  const todo = await store.todos.create('r', { title: 't' });
  const s = await store.sessions.create('r', { todo_id: todo.id, workspace_path: path });
  await store.workspaces.acquire(
    'r',
    s.id,
    () => path,
    () => branch,
  );
  await store.workspaces.setBaseRev(path, base);
  return { sessionId: s.id, todoId: todo.id };
}

describe('a workspace record naming a folder this machine did not make', () => {
  it("ending its session leaves the user's linked worktree and branch as they were", async () => {
    const tip = git(repo, 'rev-parse', 'feature');
    const { sessionId } = await foreignSession(feature, 'feature');
    await finishSession(store, sessionId, 'failed', new GitVcs());
    expect(readFileSync(join(feature, 'a.txt'), 'utf8')).toBe('edited, not committed\n');
    expect(existsSync(join(feature, 'notes.txt'))).toBe(true);
    expect(git(repo, 'rev-parse', 'feature')).toBe(tip);
    // The record is released all the same: the session is over.
    expect((await store.workspaces.list('r'))[0]?.status).toBe('free');
  });

  it("cleaning up a job said to have run here ends no process of the user's working under that path", async () => {
    const { sessionId, todoId } = await foreignSession(feature, 'feature');
    const job = await store.jobs.claim(
      'r',
      { todo_id: todoId, pid: 2 ** 22 + 7, host: hostName() },
      () => null,
    );
    await store.jobs.setSession(job.id, sessionId, feature, base);
    // The user's shell in their worktree.
    const shell = spawn('sleep', ['120'], { cwd: feature, stdio: 'ignore' });
    try {
      await waitFor(() => shell.pid !== undefined, 'the shell');
      const c = await cleanUpDeadRunner(store, store.dir, (await store.jobs.get(job.id))!, {
        status: 'failed',
        reason: 'its runner was gone',
        finishSession: (id) => finishSession(store, id, 'failed', new GitVcs()).then(() => {}),
        graceMs: 200,
      });
      expect(c.endedHere).toBe(true);
      expect(c.strays).toBe(0);
      expect(shell.exitCode).toBeNull();
      expect(shell.signalCode).toBeNull();
      expect(readFileSync(join(feature, 'a.txt'), 'utf8')).toBe('edited, not committed\n');
    } finally {
      shell.kill('SIGKILL');
    }
  });
});

describe('ii workspace prune on a shared store', () => {
  it("leaves another machine's workspace records (its free and finished ones) to that machine", async () => {
    const here = join(tmp.path, 'state');
    const there = (n: number) => join(tmp.path, 'other-machine', 'workspaces', 'r', String(n));
    const todo = await store.todos.create('r', { title: 't' });
    // Machine B's workspace 1, free; its workspace 2, held by a finished session.
    const { workspace: free } = await store.workspaces.acquire('r', 'sb1', there, workspaceBranch);
    const s = await store.sessions.create('r', { todo_id: todo.id, workspace_path: there(2), id: 'sb2' });
    await store.workspaces.acquire('r', s.id, there, workspaceBranch);
    await store.workspaces.release(free.path, 'sb1');
    await store.sessions.setStatus(s.id, 'done');
    const r = await pruneWorkspaces(store, { root: repo, slug: 'r', stateDir: here }, new GitVcs());
    expect(r.removed).toEqual([]);
    expect((await store.workspaces.list('r')).map((w) => w.path).sort()).toEqual([there(1), there(2)]);
  });
});
