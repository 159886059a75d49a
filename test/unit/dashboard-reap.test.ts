// The board cleans up a job it finds with its runner gone, as prune would:
// failed (its runner was gone), todo open again, workspace free, and says
// so; a job whose runner lives stays as it is. A real store, a real dead pid.
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { boardReaper } from '../../src/dashboard/io/reap.js';
import { DashboardSync } from '../../src/dashboard/io/sync.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { tempDir, waitFor } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let tmp: ReturnType<typeof tempDir>;
let state: StateStore;
beforeEach(() => {
  tmp = tempDir('ii-board-reap-');
  state = openStateStore({ dir: join(tmp.path, 'state') });
});
afterEach(() => {
  state.close();
  tmp.cleanup();
});

it('fails a job whose runner is gone, reopens its todo, frees its workspace, and leaves a live one', async () => {
  const repo = 'r';
  // A pid that existed and is gone: a child that already exited.
  const dead = Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
      .stdout,
  );
  const t1 = state.todos.create(repo, { title: 'killed' });
  const t2 = state.todos.create(repo, { title: 'running' });
  const gone = state.jobs.claim(repo, { todo_id: t1.id, pid: dead, host: hostname() }, () => null);
  const ws = state.workspaces.acquire(
    repo,
    's1',
    (n) => join(tmp.path, `ws${n}`),
    (n) => `b${n}`,
  );
  state.sessions.create(repo, { id: 's1', todo_id: t1.id, workspace_path: ws.workspace.path });
  state.jobs.setSession(gone.id, 's1', ws.workspace.path);
  const live = state.jobs.claim(repo, { todo_id: t2.id, pid: process.pid, host: hostname() }, () => null);

  const dash = createDashboardStore({ repo, repoLabel: repo, banner: null, color: false });
  const sync = new DashboardSync({ state, dash, pollMs: 60_000, reap: boardReaper(asyncStore(state), dash) });
  sync.loadAll();
  await waitFor(() => state.jobs.get(gone.id)?.status === 'failed', 'the board to clean up the job');
  expect(state.jobs.get(gone.id)!.failure_reason).toBe(
    `its runner (pid ${dead}) was gone; cleaned up by the board`,
  );
  expect(state.todos.get(repo, t1.id)!.status).toBe('open');
  expect(state.workspaces.list(repo).map((w) => w.status)).toEqual(['free']);
  await waitFor(
    () => dash.getState().message?.includes(`job ${gone.id} failed (its runner was gone)`),
    'the message',
  );
  await waitFor(
    () => dash.getState().jobs.find((j) => j.id === gone.id)?.status === 'failed',
    'the board to show it',
  );
  expect(state.jobs.get(live.id)!.status).toBe('active');
  expect(state.todos.get(repo, t2.id)!.status).toBe('in_progress');
  await sync.close();
});
