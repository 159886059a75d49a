// Cleaning up after a job whose runner is gone (killed, crashed, its machine
// rebooted): abandon, retry and prune all do it the same way. Its process
// groups are ended first (an agent that ignores SIGTERM, a test stuck in
// `sleep`), then the job is marked, then its session ends, which releases
// the workspace: never the other way round, or the next job would share the
// workspace with the dead one's processes.
import type { Job, TodoStatus } from '../model/index.js';
import { processesIn } from '../proc/cwd.js';
import { endRecordedGroups } from '../proc/recorded.js';
import type { StateStore } from '../state/api.js';
import { appendEvent } from '../state/events.js';

export interface DeadRunnerCleanup {
  job: Job;
  /** Process groups of the job that were still running and were ended. */
  groupsEnded: number;
  /** Process groups that even SIGKILL did not end (stuck in the kernel). */
  groupsLeft: number;
  /** Processes still working in the workspace after that (not the job's: a shell cd'd there). */
  stillInWorkspace: number[];
  /** The todo's status afterwards (null when the todo is gone). */
  todo: TodoStatus | null;
}

/**
 * Ends a job whose runner is gone: its recorded process groups (SIGTERM, then
 * SIGKILL after `graceMs`), then the job as `status` with `reason`, then its
 * session through `finishSession` (workspace released; the todo reopened
 * unless another job finished it meanwhile).
 */
export async function cleanUpDeadRunner(
  store: StateStore,
  stateDir: string,
  job: Job,
  o: {
    status: 'failed' | 'abandoned';
    reason: string;
    finishSession: (sessionId: string) => Promise<void>;
    graceMs?: number;
  },
): Promise<DeadRunnerCleanup> {
  const groups = await endRecordedGroups(store, { job_id: job.id }, o.graceMs);
  const done = store.jobs.finish(job.id, o.status, o.reason);
  try {
    appendEvent(stateDir, job.id, 'finished', { status: o.status, reason: done.failure_reason });
  } catch {} // the event log is a convenience
  if (job.session_id && store.sessions.get(job.session_id)) await o.finishSession(job.session_id);
  else {
    // The runner died before its session was recorded: while the workspace
    // was being made, it was claimed under the session's id (the job names
    // it from its claim). Give it back; the next session to get it resets or
    // re-creates it.
    if (job.session_id)
      for (const w of store.workspaces.list(job.repo))
        if (w.status === 'acquired' && w.session_id === job.session_id) store.workspaces.release(w.path);
    if (store.todos.get(job.repo, job.todo_id)?.status === 'in_progress')
      store.todos.setStatus(job.repo, job.todo_id, 'open');
  }
  return {
    job: store.jobs.get(job.id) ?? done,
    groupsEnded: groups.ended.length,
    groupsLeft: groups.left.length,
    stillInWorkspace: job.workspace_path ? processesIn(job.workspace_path) : [],
    todo: store.todos.get(job.repo, job.todo_id)?.status ?? null,
  };
}

/** What a cleanup did, for a message: "ended 2 process groups; workspace released; todo reopened". */
export function describeCleanup(c: DeadRunnerCleanup): string {
  const parts: string[] = [];
  if (c.groupsEnded > 0)
    parts.push(`ended ${c.groupsEnded} process group${c.groupsEnded === 1 ? '' : 's'} it left running`);
  if (c.groupsLeft > 0)
    parts.push(
      `${c.groupsLeft} process group${c.groupsLeft === 1 ? '' : 's'} would not die (see ps -eo pid,pgid,stat,cmd)`,
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
