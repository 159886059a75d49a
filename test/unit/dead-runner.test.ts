import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { landJob } from '../../src/land/landing.js';
import { repoSlug, stateDir } from '../../src/state/paths.js';
import { JobFixture, jobIdFrom, write } from '../helpers/job.js';
import { cleanUpDeadRunner, describeCleanup } from '../../src/job/dead-runner.js';
import { launchJob } from '../../src/job/launch.js';
import { Config } from '../../src/model/config.js';
import { GitVcs } from '../../src/vcs/git.js';
import { signalGroup } from '../../src/proc/group.js';
import { hostName } from '../../src/proc/host.js';
import { groupRecorder } from '../../src/proc/recorded.js';
import { finishSession, startSession } from '../../src/session/index.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { runningInGroup } from '../helpers/procs.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
const pgids: number[] = [];
beforeEach(() => {
  tmp = tempDir('ii-dead-');
  store = openStateStore({ dir: join(tmp.path, 'state') });
});
afterEach(() => {
  for (const p of pgids.splice(0)) signalGroup(p, 'SIGKILL');
  store.close();
  tmp.cleanup();
});

/**
 * Git whose making of a workspace (git worktree add, or the reset of a free
 * one) never returns: the runner is "killed" there, after the workspace is
 * claimed in the store and before the session is recorded. `inAdd` resolves
 * once it is stuck.
 */
function stuckVcs(): { vcs: GitVcs; inAdd: Promise<void> } {
  let stuck!: () => void;
  const inAdd = new Promise<void>((r) => (stuck = r));
  const never = () => {
    stuck();
    return new Promise<never>(() => {});
  };
  class StuckVcs extends GitVcs {
    override addWorkspace(): Promise<void> {
      return never();
    }
    override resetWorkspace(): Promise<void> {
      return never();
    }
  }
  return { vcs: new StuckVcs(), inAdd };
}

describe('cleaning up after a dead runner', () => {
  it('ends the recorded groups before the session (and so the workspace) is released', async () => {
    const todo = store.todos.create('r', { title: 't' });
    store.todos.setStatus('r', todo.id, 'in_progress');
    store.sessions.create('r', { id: 's1', todo_id: todo.id, workspace_path: tmp.path });
    const job = store.jobs.create('r', { todo_id: todo.id, session_id: 's1', workspace_path: tmp.path });
    const child = spawn('/bin/sh', ['-c', "trap '' TERM; sleep 600"], {
      cwd: tmp.path,
      detached: true,
      stdio: 'ignore',
    });
    child.unref();
    pgids.push(child.pid!);
    await waitFor(() => runningInGroup(child.pid!).length > 0, 'the group');
    groupRecorder(asyncStore(store), job.id, tmp.path)(child.pid!, 'test: sleep');

    let aliveAtRelease: number[] | null = null;
    const c = await cleanUpDeadRunner(asyncStore(store), store.dir, job, {
      status: 'abandoned',
      reason: 'gone',
      graceMs: 200,
      finishSession: async () => {
        aliveAtRelease = runningInGroup(child.pid!);
        store.todos.setStatus('r', todo.id, 'open');
      },
    });
    expect(aliveAtRelease).toEqual([]);
    expect(c).toMatchObject({ groupsEnded: 1, groupsLeft: 0, stillInWorkspace: [], todo: 'open' });
    expect(c.job.status).toBe('abandoned');
    expect(describeCleanup(c)).toBe(
      'ended 1 process group it left running; workspace released; todo reopened',
    );
  });

  it('a runner killed while its workspace was being made: the job names the session it claimed it under, and the cleanup gives it back', async () => {
    const repo = join(tmp.path, 'repo');
    mkdirSync(repo);
    gitRepo(repo);
    const { vcs, inAdd } = stuckVcs();
    const todo = store.todos.create('r', { title: 't' });
    void launchJob(
      {
        vcs,
        startAgent: () => {
          throw new Error('no agent in this test');
        },
        resolveAgent: () => ({ name: 'none', command: ['true'], env: {} }),
        startSession: (s, o) => startSession(s, o, vcs),
        finishSession: (s, id, outcome) => finishSession(s, id, outcome, vcs),
      },
      {
        store: asyncStore(store),
        stateDir: store.dir,
        repo: { root: repo, slug: 'r' },
        config: Config.parse({ job: { 'test-commands': ['true'] } }),
        todo,
        claim: 'ready',
      },
    );
    await inAdd;
    const job = store.jobs.list('r', { activeOnly: true })[0]!;
    expect(store.workspaces.list('r').map((w) => w.status)).toEqual(['acquired']);
    expect(store.sessions.list('r')).toEqual([]);

    const c = await cleanUpDeadRunner(asyncStore(store), store.dir, job, {
      status: 'failed',
      reason: 'gone',
      finishSession: (id) => finishSession(asyncStore(store), id, 'failed', new GitVcs()).then(() => {}),
    });
    expect(c.job.status).toBe('failed');
    expect(c.todo).toBe('open');
    expect(store.workspaces.list('r').map((w) => w.status)).toEqual(['free']);
  });

  it('a landing runner killed while making the workspace for a conflict resolution: the job names its new session, and the cleanup gives the workspace back', async () => {
    // A real completed job, then a trunk that changes the same line.
    const f = new JobFixture('ii-dead-land-');
    try {
      f.setup(['test -f README.md']);
      const s = f.scenario('work', {
        implement: [{ actions: [write('README.md', '# from the job\n')] }],
        'commit-message': [{ actions: [{ type: 'commit_message', text: 'Job work' }] }],
      });
      const r0 = f.run(['job', 'do', '--title', 'work'], s);
      expect(r0.code, r0.stderr).toBe(0);
      const id = jobIdFrom(r0.stderr);
      writeFileSync(join(f.repo, 'README.md'), '# from main\n');
      f.git('commit', '-qam', 'main edits the same line');

      const dir = stateDir(f.env);
      const s2 = openStateStore({ dir });
      try {
        const slug = repoSlug(f.repo);
        const done = s2.jobs.resolve(slug, id);
        const oldSession = done.session_id;
        // (The job's old workspace is free again, so it is reset, not added.)
        const { vcs, inAdd } = stuckVcs();
        void landJob({
          store: asyncStore(s2),
          stateDir: dir,
          repo: { root: f.repo, slug },
          config: Config.parse({ job: { 'test-commands': ['true'] } }),
          job: done,
          vcs: new GitVcs(),
          deps: async () => ({
            vcs,
            startAgent: () => {
              throw new Error('no agent in this test');
            },
            resolveAgent: () => ({ name: 'none', command: ['true'], env: {} }),
            startSession: (st, o) => startSession(st, o, vcs),
            finishSession: (st, sid, outcome) => finishSession(st, sid, outcome, vcs),
          }),
        });
        await inAdd;
        // The runner "dies" here: the new workspace is held, no session recorded yet.
        const held = s2.workspaces.list(slug).filter((w) => w.status === 'acquired');
        expect(held).toHaveLength(1);
        const job = s2.jobs.get(done.id)!;
        expect(job.status).toBe('active');
        expect(job.session_id).not.toBe(oldSession);

        const c = await cleanUpDeadRunner(asyncStore(s2), dir, job, {
          status: 'failed',
          reason: 'gone',
          finishSession: (sid) => finishSession(asyncStore(s2), sid, 'failed', new GitVcs()).then(() => {}),
        });
        expect(c.job.status).toBe('failed');
        expect(s2.workspaces.list(slug).filter((w) => w.status === 'acquired')).toEqual([]);
      } finally {
        s2.close();
      }
    } finally {
      f.cleanup();
    }
  });

  it('reopens the todo as it marks the job, so a cleanup killed before the session ends strands nothing; the session’s end then leaves a todo a new job holds', async () => {
    const todo = store.todos.create('r', { title: 't' });
    store.todos.setStatus('r', todo.id, 'in_progress');
    store.sessions.create('r', { id: 's1', todo_id: todo.id, workspace_path: tmp.path });
    const job = store.jobs.create('r', { todo_id: todo.id, session_id: 's1', workspace_path: tmp.path });
    // The cleaner dies as it would end the session (ii run SIGKILLed there: run-chaos).
    const died = new Error('killed');
    await expect(
      cleanUpDeadRunner(asyncStore(store), store.dir, job, {
        status: 'failed',
        reason: 'gone',
        finishSession: () => Promise.reject(died),
      }),
    ).rejects.toBe(died);
    expect(store.jobs.get(job.id)!.status).toBe('failed');
    expect(store.todos.get('r', todo.id)!.status).toBe('open');
    // A new job claims it; the dead job's session ends after: the todo stays the new job's.
    store.sessions.create('r', { id: 's2', todo_id: todo.id, workspace_path: join(tmp.path, 'other') });
    store.todos.setStatus('r', todo.id, 'in_progress');
    store.jobs.create('r', { todo_id: todo.id, session_id: 's2', workspace_path: join(tmp.path, 'other') });
    await finishSession(asyncStore(store), 's1', 'failed', new GitVcs());
    expect(store.todos.get('r', todo.id)!.status).toBe('in_progress');
    // Its own session's end reopens it, its job already ended.
    const second = store.jobs.list('r', { activeOnly: true })[0]!;
    store.jobs.finish(second.id, 'failed', 'test');
    await finishSession(asyncStore(store), 's2', 'failed', new GitVcs());
    expect(store.todos.get('r', todo.id)!.status).toBe('open');
  });

  it('ends what the runner left in its own group (the git making its workspace) before the workspace is handed on; never a group that is not a session of its own', async () => {
    /** Runs `script` in a session of its own; the pid it prints first, once it has. */
    const started = async (script: string) => {
      const c = spawn('/bin/bash', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
      pgids.push(c.pid!);
      let out = '';
      c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const printed = await waitFor(() => /^(\d+)\n/.exec(out)?.[1] ?? null, 'its pid');
      return { c, pid: Number(printed) };
    };
    // The runner: a session of its own, killed with its git (a sleep here) still running.
    const { c: runner, pid: git } = await started('sleep 600 & echo $!; kill -9 $$');
    await waitFor(() => runner.exitCode !== null || runner.signalCode !== null, 'the runner to die');
    expect(runningInGroup(runner.pid!)).toEqual([git]);
    // The person's own: a group whose first process ended, in their shell's session.
    const { pid: theirs } = await started('set -m; bash -c "sleep 600 & echo \\$\\$"; sleep 600');
    pgids.push(theirs);
    await waitFor(() => runningInGroup(theirs).length === 1 || null, 'their group');

    const todo = store.todos.create('r', { title: 't' });
    const cleanup = (pid: number) =>
      cleanUpDeadRunner(
        asyncStore(store),
        store.dir,
        store.jobs.create('r', { todo_id: todo.id, pid, host: hostName() }),
        { status: 'failed', reason: 'gone', graceMs: 200, finishSession: async () => {} },
      );
    await cleanup(theirs);
    expect(runningInGroup(theirs)).toHaveLength(1);
    const c = await cleanup(runner.pid!);
    expect(c.strays).toBe(1);
    expect(runningInGroup(runner.pid!)).toEqual([]);
  });

  it('says so when the todo was finished by another job meanwhile', async () => {
    const todo = store.todos.create('r', { title: 't' });
    store.todos.setStatus('r', todo.id, 'done');
    const job = store.jobs.create('r', { todo_id: todo.id });
    const c = await cleanUpDeadRunner(asyncStore(store), store.dir, job, {
      status: 'failed',
      reason: 'gone',
      finishSession: async () => {},
    });
    expect(c.todo).toBe('done');
    expect(describeCleanup(c)).toBe('workspace released; todo left done');
  });
});

describe('acquiring a workspace', () => {
  it('ends what is recorded for a free workspace, and passes over one a process still works in', async () => {
    const repo = join(tmp.path, 'repo');
    (await import('node:fs')).mkdirSync(repo);
    gitRepo(repo);
    const o = (todoId: string) => ({ repoRoot: repo, slug: 'r', todoId, stateDir: store.dir });
    const t = () => store.todos.create('r', { title: 't' }).id;
    const first = await startSession(asyncStore(store), o(t()), new GitVcs());
    await finishSession(asyncStore(store), first.session.id, 'failed', new GitVcs());
    const ws = first.workspacePath;

    // A dead job's recorded group in the free workspace: ended, then the workspace is reused.
    const rec = spawn('/bin/sh', ['-c', "trap '' TERM; sleep 600"], {
      cwd: ws,
      detached: true,
      stdio: 'ignore',
    });
    rec.unref();
    pgids.push(rec.pid!);
    await waitFor(() => runningInGroup(rec.pid!).length > 0, 'the recorded group');
    groupRecorder(asyncStore(store), 'dead-job', ws)(rec.pid!, 'agent');
    const second = await startSession(asyncStore(store), o(t()), new GitVcs());
    expect(runningInGroup(rec.pid!)).toEqual([]);
    expect(second.workspacePath).toBe(ws);
    await finishSession(asyncStore(store), second.session.id, 'failed', new GitVcs());

    // Something unrecorded working there: the workspace is not handed out.
    const stray = spawn('sleep', ['600'], { cwd: ws, detached: true, stdio: 'ignore' });
    stray.unref();
    pgids.push(stray.pid!);
    await waitFor(() => runningInGroup(stray.pid!).length > 0, 'the stray process');
    const third = await startSession(asyncStore(store), o(t()), new GitVcs());
    expect(third.workspacePath).not.toBe(ws);
    expect(store.workspaces.list('r').find((w) => w.path === ws)?.status).toBe('free');
  });
});
