// A job's runner, or the ii run cleaning up after it, killed between the
// job's end and its session's: the session stayed active, its workspace held
// for good (prune kept it as in use), and a completed job's todo stayed in
// progress. ii workspace prune ends such a session as the runner would have
// (run-chaos: "sessions still active after every job ended", in CI), and
// leaves alone one whose runner is still alive, ending it itself.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { pruneWorkspaces } from '../../src/session/workspaces.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { openStateStore } from '../../src/state/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { GitVcs } from '../../src/vcs/git.js';
import { DEAD_PID, strandedJob as strandedJobIn } from '../helpers/stranded.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let store: AsyncStateStore;
const vcs = new GitVcs();
beforeEach(() => {
  tmp = tempDir('ii-stranded-');
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'a.txt': 'one\n' });
  store = asyncStore(openStateStore({ dir: join(tmp.path, 'state') }));
});
afterEach(async () => {
  await store.close();
  tmp.cleanup();
});

const strandedJob = (status: 'completed' | 'failed', pid: number) =>
  strandedJobIn(store, vcs, { root: repo, slug: 'r' }, status, pid);

const prune = () => pruneWorkspaces(store, { root: repo, slug: 'r', stateDir: store.dir }, vcs);

it('a failed job’s session its dead runner never ended: ended failed, its todo reopened, its workspace pruned', async () => {
  const { todo, path, sessionId } = await strandedJob('failed', DEAD_PID);
  expect((await store.sessions.get(sessionId))?.status).toBe('active');
  const r = await prune();
  expect(r.removed.map((x) => [x.path, x.reason])).toEqual([[path, 'finished session']]);
  expect((await store.sessions.get(sessionId))?.status).toBe('failed');
  expect((await store.todos.get('r', todo.id))?.status).toBe('open');
  expect(await store.workspaces.list('r')).toEqual([]);
  expect(existsSync(path)).toBe(false);
});

it('a completed job’s: ended done, its todo done', async () => {
  const { todo, sessionId } = await strandedJob('completed', DEAD_PID);
  await prune();
  expect((await store.sessions.get(sessionId))?.status).toBe('done');
  expect((await store.todos.get('r', todo.id))?.status).toBe('done');
});

it('one whose runner is alive (ending it now) is left to it', async () => {
  const { todo, path, sessionId } = await strandedJob('completed', process.pid);
  const r = await prune();
  expect(r.removed).toEqual([]);
  expect((await store.sessions.get(sessionId))?.status).toBe('active');
  expect((await store.todos.get('r', todo.id))?.status).toBe('in_progress');
  expect((await store.workspaces.list('r')).map((w) => [w.path, w.status])).toEqual([[path, 'acquired']]);
});
