// Cleaning up after a job whose runner is gone (killed, crashed, its machine
// rebooted): abandon, retry, prune, and whoever meets such a job (ii run,
// ii job list, ii todo list, the board) all do it the same way. The job is
// marked first, and only while it is still the dead runner's (two cleanups
// at once: one goes on, the other leaves it), then its process groups are
// ended (an agent that ignores SIGTERM, a test stuck in `sleep`) and every
// other process it left (setsid, found by its workspace or the job's id in
// its environment), then its session ends, which releases the workspace:
// never the other way round, or the next job would share the workspace with
// the dead one's processes.
import type { Job, TodoStatus } from '../model/index.js';
import { processesIn } from '../proc/cwd.js';
import { hostName } from '../proc/host.js';
import { endJobProcesses } from '../proc/job-processes.js';
import { endRecordedGroups, type EndedGroups } from '../proc/recorded.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { appendEvent } from '../state/events.js';
import { workspacesDir } from '../state/paths.js';
import { isInside } from '../session/paths.js';
import { reopenUnheld } from '../session/session.js';
import { runnerGoneIn } from './runner-gone.js';

// Where a runner is judged gone: small, so a command can check before loading the cleanup.
export { runnerExitedIn, runnerGone, runnerGoneIn } from './runner-gone.js';

export interface DeadRunnerCleanup {
  job: Job;
  /** False when another process ended the job first (or it runs again under a live runner): nothing was done here. */
  endedHere: boolean;
  /** Process groups of the job that were still running and were ended. */
  groupsEnded: number;
  /** Process groups that even SIGKILL did not end (stuck in the kernel). */
  groupsLeft: number;
  /** Other processes of the job (outside its groups: setsid) that were ended. */
  strays: number;
  /** Processes still working in the workspace after that (stuck, or another user's). */
  stillInWorkspace: number[];
  /** The todo's status afterwards (null when the todo is gone). */
  todo: TodoStatus | null;
}

/**
 * Ends a job whose runner is gone: the job as `status` with `reason` (only
 * while it is still active under the runner it had when read), then its
 * recorded process groups (SIGTERM, then SIGKILL after `graceMs`) and the
 * other processes it left, then its session through `finishSession`
 * (workspace released; the todo reopened unless another job finished it
 * meanwhile).
 */
export async function cleanUpDeadRunner(
  store: AsyncStateStore,
  stateDir: string,
  job: Job,
  o: {
    status: 'failed' | 'abandoned';
    reason: string;
    finishSession: (sessionId: string) => Promise<void>;
    graceMs?: number;
  },
): Promise<DeadRunnerCleanup> {
  const done = await store.jobs.finishOrphan(job.id, { pid: job.pid, host: job.host }, o.status, o.reason);
  if (!done) {
    const now = (await store.jobs.get(job.id)) ?? job;
    return {
      job: now,
      endedHere: false,
      groupsEnded: 0,
      groupsLeft: 0,
      strays: 0,
      stillInWorkspace: [],
      todo: (await store.todos.get(job.repo, job.todo_id))?.status ?? null,
    };
  }
  // From here the job is ours alone to clean up (marked first for that: a
  // late second cleanup must not end what a new job runs in the workspace
  // once it is released). Its todo is reopened at once: were this process
  // killed before the session below ends (ending the processes takes up to
  // graceMs), the todo would stay in progress with no active job left for
  // anyone to meet (run-chaos, twice in CI). A new job that claims it gets
  // another workspace: this one is released only with the session.
  await reopenUnheld(store, job.repo, job.todo_id, job.session_id);
  // Whatever fails in ending its processes, the session below is still ended.
  const groups = await endRecordedGroups(store, { job_id: job.id }, o.graceMs).catch((): EndedGroups => ({
    ended: [],
    left: [],
  }));
  // The cwd rule only for a workspace the store made, in this machine's
  // workspaces folder (a record's path is trusted no further: every process
  // working under it would be ended; in a shared store another machine wrote
  // it, and its workspace record with it).
  const ws = job.workspace_path;
  const strays = await Promise.resolve()
    .then(async () => {
      const known =
        ws !== null &&
        isInside(workspacesDir(store.dir, job.repo), ws) &&
        (await store.workspaces.list(job.repo)).some((w) => w.path === ws);
      // Its runner's own group too (a runner of this machine leads one): the
      // git it had started goes before the workspace is handed on.
      const own = job.host === hostName() && job.pid != null ? [job.pid] : [];
      return endJobProcesses({ jobIds: [job.id], dirs: known ? [ws] : [], groups: own }, o.graceMs);
    })
    .catch(() => ({ ended: [], left: [] }));
  try {
    appendEvent(stateDir, job.id, 'finished', { status: o.status, reason: done.failure_reason });
  } catch {} // the event log is a convenience
  if (job.session_id && (await store.sessions.get(job.session_id))) await o.finishSession(job.session_id);
  else {
    // The runner died before its session was recorded: while the workspace
    // was being made, it was claimed under the session's id (the job names
    // it from its claim). Give it back; the next session to get it resets or
    // re-creates it.
    if (job.session_id)
      for (const w of await store.workspaces.list(job.repo))
        if (w.status === 'acquired' && w.session_id === job.session_id)
          await store.workspaces.release(w.path);
    await reopenUnheld(store, job.repo, job.todo_id, job.session_id);
  }
  return {
    job: (await store.jobs.get(job.id)) ?? done,
    endedHere: true,
    groupsEnded: groups.ended.length,
    groupsLeft: groups.left.length,
    strays: strays.ended.length,
    stillInWorkspace: job.workspace_path ? processesIn(job.workspace_path) : [],
    todo: (await store.todos.get(job.repo, job.todo_id))?.status ?? null,
  };
}

/**
 * Cleans up a job met with its runner gone (runnerGone), as prune does:
 * failed, saying its runner was gone and who found it; its todo reopened
 * (the failure counts as an attempt); its workspace freed. null when the job
 * is not such a job (any more) or another process cleaned it up first.
 */
export async function reapDeadRunner(
  store: AsyncStateStore,
  jobId: string,
  o: { by: string; finishSession: (sessionId: string) => Promise<void>; graceMs?: number },
): Promise<DeadRunnerCleanup | null> {
  const job = await store.jobs.get(jobId);
  if (!job || !(await runnerGoneIn(store, job))) return null;
  const c = await cleanUpDeadRunner(store, store.dir, job, {
    status: 'failed',
    reason: `its runner (pid ${job.pid}) was gone; cleaned up by ${o.by}`,
    finishSession: o.finishSession,
    ...(o.graceMs !== undefined ? { graceMs: o.graceMs } : {}),
  });
  return c.endedHere ? c : null;
}

/** A line for a job reapDeadRunner cleaned up: "job X failed (its runner was gone): …". */
export function reapedLine(c: DeadRunnerCleanup): string {
  return `job ${c.job.id} failed (its runner was gone): ${describeCleanup(c)}`;
}

/** What a cleanup did, for a message: "ended 2 process groups; workspace released; todo reopened". */
export function describeCleanup(c: DeadRunnerCleanup): string {
  const parts: string[] = [];
  if (!c.endedHere) return `another process had already ended it (${c.job.status})`;
  if (c.groupsEnded > 0)
    parts.push(`ended ${c.groupsEnded} process group${c.groupsEnded === 1 ? '' : 's'} it left running`);
  if (c.groupsLeft > 0)
    parts.push(
      `${c.groupsLeft} process group${c.groupsLeft === 1 ? '' : 's'} would not die (see ps -eo pid,pgid,stat,cmd)`,
    );
  if (c.strays > 0)
    parts.push(
      `ended ${c.strays} other process${c.strays === 1 ? '' : 'es'} it left running (outside its groups)`,
    );
  if (c.stillInWorkspace.length > 0)
    parts.push(
      `workspace released, but processes ${c.stillInWorkspace.join(', ')} still work in it, so no job gets it until they end`,
    );
  else parts.push('workspace released');
  parts.push(
    c.todo === 'open'
      ? 'todo reopened'
      : c.todo === null
        ? 'its todo no longer exists'
        : `todo left ${c.todo === 'in_progress' ? 'in progress (another job is on it)' : c.todo}`,
  );
  return parts.join('; ');
}

/**
 * Cleans up every job of `repo` met with its runner gone (runnerGone), one
 * after another, as `by` (named in each job's failure reason). What ii run,
 * ii job list, ii todo list and the board do with what they meet: left
 * active, such a job holds its todo in progress and its workspace for good.
 */
export async function reapDeadRunners(
  store: AsyncStateStore,
  repo: string,
  o: { by: string; finishSession: (sessionId: string) => Promise<void>; graceMs?: number },
): Promise<DeadRunnerCleanup[]> {
  const out: DeadRunnerCleanup[] = [];
  for (const j of await store.jobs.activeRunners(repo)) {
    if (!(await runnerGoneIn(store, j))) continue;
    const c = await reapDeadRunner(store, j.id, o);
    if (c) out.push(c);
  }
  return out;
}
