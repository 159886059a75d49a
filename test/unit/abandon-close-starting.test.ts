// Abandon-and-close (the board's a then x) on a job whose workspace is still
// being made: the claim names the job `implementing` at once, so a person can
// press it then. The session's start put the todo in progress after the
// close, and the job's end reopened it, for the runner to start again.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { abandonJob } from '../../src/job/abandon.js';
import { launchJob } from '../../src/job/launch.js';
import { Config } from '../../src/model/config.js';
import { finishSession, startSession } from '../../src/session/index.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
beforeEach(() => {
  tmp = tempDir('ii-abandon-starting-');
  store = openStateStore({ dir: join(tmp.path, 'state') });
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

/** Git whose git worktree add waits for `go`; `inAdd` resolves once it waits. */
function gatedVcs() {
  let waiting!: () => void;
  let go!: () => void;
  const inAdd = new Promise<void>((r) => (waiting = r));
  const gate = new Promise<void>((r) => (go = r));
  class GatedVcs extends GitVcs {
    override async addWorkspace(root: string, path: string, branch: string, baseRev: string) {
      waiting();
      await gate;
      return super.addWorkspace(root, path, branch, baseRev);
    }
  }
  return { vcs: new GatedVcs(), inAdd, go };
}

it('the todo closed while the job’s workspace is being made stays closed when the job ends', async () => {
  const repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  const s = asyncStore(store);
  const { vcs, inAdd, go } = gatedVcs();
  const todo = store.todos.create('r', { title: 't' });
  const launched = launchJob(
    {
      vcs,
      // The job ends at its agent's start, as an abandoned one would: its
      // session finished failed, which reopens a todo still in progress.
      startAgent: () => {
        throw new Error('no agent in this test');
      },
      resolveAgent: () => ({ name: 'none', command: ['true'], env: {} }),
      startSession: (st, o) => startSession(st, o, vcs),
      finishSession: (st, id, outcome) => finishSession(st, id, outcome, vcs),
    },
    {
      store: s,
      stateDir: store.dir,
      repo: { root: repo, slug: 'r' },
      config: Config.parse({ job: { 'test-commands': ['true'] } }),
      todo,
      claim: 'ready',
    },
  ).then(
    () => 'ran',
    (e: unknown) => e,
  );
  await inAdd;
  const job = store.jobs.list('r', { activeOnly: true })[0]!;
  expect(job.stage).toBe('implementing');
  const r = await abandonJob(s, store.dir, job, {
    closeTodo: true,
    probe: { host: job.host!, pidAlive: () => true },
    finishSession: async () => {},
  });
  expect(r.kind).toBe('requested');
  expect(store.todos.get('r', todo.id)?.status).toBe('closed');
  go();
  await launched;
  expect(store.jobs.get(job.id)?.status).not.toBe('active');
  expect(store.sessions.list('r').map((x) => x.status)).toEqual(['failed']);
  expect(store.todos.get('r', todo.id)?.status).toBe('closed');
});
