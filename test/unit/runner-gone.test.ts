// When a job's runner counts as gone, for whoever meets the job to clean it
// up: only on this machine, only when its pid names no live process or a
// process that started at another time than the runner (the pid reused).
// A live runner is never judged gone. Real processes, a real store.
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { releaseSession } from '../../src/dashboard/io/actions.js';
import { abandonJob } from '../../src/job/abandon.js';
import { reapDeadRunner, runnerGone, runnerGoneIn } from '../../src/job/dead-runner.js';
import { localProbe } from '../../src/proc/alive.js';
import { startTicks } from '../../src/proc/group.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { tempDir } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

/** The session release the board makes (no workspace here to reset). */
const release = (id: string) => releaseSession(asyncStore(store))(id);

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
const kids: number[] = [];
beforeEach(() => {
  tmp = tempDir('ii-gone-');
  store = openStateStore({ dir: join(tmp.path, 'state') });
});
afterEach(() => {
  for (const p of kids.splice(0))
    try {
      process.kill(p, 'SIGKILL');
    } catch {}
  store.close();
  tmp.cleanup();
});

/** A pid that existed and is gone: a child that already exited. */
const deadPid = () =>
  Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
      .stdout,
  );

/** A live process other than this one (what a reused pid names). */
function liveProcess(): number {
  const c = spawn('sleep', ['600'], { stdio: 'ignore' });
  kids.push(c.pid!);
  return c.pid!;
}

function activeJob(pid: number, host = hostname()) {
  const todo = store.todos.create('r', { title: 't' });
  const job = store.jobs.claim('r', { todo_id: todo.id, pid, host }, () => null);
  return { todo, job };
}

describe('a runner is gone', () => {
  it('when its pid is dead on this machine, not on another machine', () => {
    const pid = deadPid();
    expect(runnerGone({ status: 'active', pid, host: hostname() })).toBe(true);
    expect(runnerGone({ status: 'active', pid, host: 'elsewhere' })).toBe(false);
    expect(runnerGone({ status: 'failed', pid, host: hostname() })).toBe(false);
  });

  it('when its pid now names a process that started at another time (reused), never while it is the runner', async () => {
    const pid = liveProcess();
    const { todo, job } = activeJob(pid);
    // No start given yet (before its first heartbeat): a live pid is the runner.
    expect(await runnerGoneIn(asyncStore(store), job)).toBe(false);
    // Its heartbeat gave the start ticks of the process that has the pid: the runner.
    store.jobs.heartbeat(job.id, pid, hostname(), startTicks(pid));
    expect(store.jobs.runnerStart(job.id)).toBe(startTicks(pid));
    expect(await runnerGoneIn(asyncStore(store), job)).toBe(false);
    expect(
      await reapDeadRunner(asyncStore(store), job.id, { by: 'a test', finishSession: release }),
    ).toBeNull();
    expect(store.jobs.get(job.id)!.status).toBe('active');
    // The runner that gave these ticks started at another time: what has the pid now is not it.
    store.jobs.heartbeat(job.id, pid, hostname(), startTicks(pid)! - 1);
    expect(await runnerGoneIn(asyncStore(store), job)).toBe(true);
    const c = await reapDeadRunner(asyncStore(store), job.id, {
      by: 'a test',
      finishSession: release,
      graceMs: 200,
    });
    expect(c?.job.status).toBe('failed');
    expect(c?.job.failure_reason).toBe(`its runner (pid ${pid}) was gone; cleaned up by a test`);
    expect(store.todos.get('r', todo.id)!.status).toBe('open');
    // The process that reused the pid is no business of the job's.
    expect(() => process.kill(pid, 0)).not.toThrow();
  });

  it('ticks given for another pid (a landing resumed the job in a new process) are not used', async () => {
    const pid = liveProcess();
    const { job } = activeJob(pid);
    store.jobs.heartbeat(job.id, pid, hostname(), 1);
    store.jobs.finish(job.id, 'completed');
    store.jobs.resume(job.id, process.pid, hostname());
    expect(store.jobs.runnerStart(job.id)).toBeNull();
    expect(await runnerGoneIn(asyncStore(store), store.jobs.get(job.id)!)).toBe(false);
  });

  it('ii job abandon of a job whose pid was reused cleans it up instead of asking a runner that is not there', async () => {
    const pid = liveProcess();
    const { todo, job } = activeJob(pid);
    store.jobs.heartbeat(job.id, pid, hostname(), startTicks(pid)! + 1);
    const r = await abandonJob(asyncStore(store), store.dir, store.jobs.get(job.id)!, {
      probe: localProbe,
      finishSession: async () => {},
    });
    expect(r.kind).toBe('cleaned');
    expect(store.jobs.get(job.id)!.status).toBe('abandoned');
    expect(store.todos.get('r', todo.id)!.status).toBe('open');
    expect(store.control.pending(job.id)).toEqual([]);
  });
});
