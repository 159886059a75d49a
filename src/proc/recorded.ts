// A job's process groups, recorded in the store while they run. A runner that
// is killed (kill -9, a crash) cannot end its agent and test commands itself:
// they keep running in its workspace. Whoever cleans up after it (abandon,
// retry, prune, the next acquire of the workspace) finds them here and ends
// them before the workspace is released or handed out again.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { hostName } from './host.js';
import type { ProcessGroup } from '../model/session.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { endGroup, isOurGroup, startTicks } from './group.js';
import { niceSession } from './priority.js';

/** A recorded group; forget() drops the record once nothing of the group runs. */
export interface RecordedGroup {
  readonly pgid: number;
  /** Never rejects. */
  forget(): Promise<void>;
}

/** Records a group just started (led by `pgid`, which started at `leaderStart` ticks) for a job. Never throws. */
export type GroupRecorder = (pgid: number, label: string, leaderStart?: number | null) => RecordedGroup;

/**
 * The recorder of one job's groups, working in `workspacePath`. The record is
 * written as the group starts, without holding up the spawn (a store on a
 * server answers in a round trip); forget() waits for it, so a group that
 * ends at once never leaves its record behind.
 */
export function groupRecorder(store: AsyncStateStore, jobId: string, workspacePath: string): GroupRecorder {
  return (pgid, label, leaderStart = startTicks(pgid)) => {
    const recorded: Promise<number | null> = store.processGroups
      .record({
        job_id: jobId,
        workspace_path: workspacePath,
        pgid,
        start_ticks: leaderStart,
        host: hostName(),
        label,
      })
      .then(
        (g) => g.id,
        () => null, // the store refused (busy, read-only): the cwd check at acquire still guards the workspace
      );
    let forgotten = false;
    return {
      pgid,
      async forget() {
        const id = await recorded;
        if (id === null || forgotten) return;
        try {
          await store.processGroups.forget(id);
          forgotten = true;
        } catch {} // a record left behind is checked and dropped by the next cleanup
      },
    };
  };
}

/** A child leading its own process group, recorded while it runs. */
export interface GroupChild {
  child: ChildProcess;
  /**
   * SIGTERM the group, SIGKILL after `graceMs`; resolves when nothing of it
   * runs. With `eofMs`, its stdin is closed first and it gets that long to
   * end by itself. Safe to call twice (the first call's grace holds).
   */
  stop(graceMs: number, eofMs?: number): Promise<void>;
}

/**
 * Spawns `command` as the leader of a new process group (detached) and records
 * the group with `record`: every child that can outlive a step starts here
 * (the agent, setup and test commands). Call stop() when done with it (also after it exits:
 * what it left in the background goes too), which drops the record.
 */
export function spawnInGroup(
  command: string,
  args: string[],
  options: Omit<SpawnOptions, 'detached'>,
  record?: { recorder: GroupRecorder; label: string },
): GroupChild {
  const child = spawn(command, args, { ...options, detached: true });
  const pid = child.pid;
  niceSession(pid); // a session of its own: lowered with its starter (a runner of ii run's)
  // Taken now, while the child cannot have been reaped: the group's identity
  // for every later signal (stop() also runs after the leader has exited).
  const leaderStart = pid !== undefined ? startTicks(pid) : null;
  const group = pid !== undefined && record ? record.recorder(pid, record.label, leaderStart) : null;
  let stopping: Promise<void> | null = null;
  return {
    child,
    stop(graceMs, eofMs) {
      stopping ??= (async () => {
        if (pid === undefined) return;
        const eof = eofMs ? { close: () => child.stdin?.end(), ms: eofMs } : undefined;
        // A group that outlived even SIGKILL's wait keeps its record: a later cleanup retries.
        if (await endGroup(pid, leaderStart, graceMs, eof)) await group?.forget();
      })();
      return stopping;
    },
  };
}

/**
 * True when the recorded group is still the one that was recorded (see
 * isOurGroup). A record can outlive its group by minutes (its runner was
 * killed, or forgetting it failed on a busy store), long enough for the pid
 * to come back as another group: Linux keeps a pid from reuse only while it
 * still names a process group, not after the group has emptied.
 */
export function sameGroup(g: Pick<ProcessGroup, 'pgid' | 'start_ticks'>): boolean {
  return isOurGroup(g.pgid, g.start_ticks);
}

export interface EndedGroups {
  /** Groups that still ran and were ended. */
  ended: ProcessGroup[];
  /** Groups that could not be ended (SIGKILL did not take within its wait). */
  left: ProcessGroup[];
}

/**
 * Ends the recorded groups of a job (or of every job that ran in a
 * workspace) on this host: SIGTERM, SIGKILL after `graceMs`. Records of
 * groups that are gone, or whose pid now names another process, are dropped
 * without a signal.
 */
export async function endRecordedGroups(
  store: AsyncStateStore,
  filter: { job_id: string } | { workspace_path: string },
  graceMs = 3000,
): Promise<EndedGroups> {
  const host = hostName();
  const out: EndedGroups = { ended: [], left: [] };
  const groups = (await store.processGroups.list(filter)).filter((g) => g.host === host);
  await Promise.all(
    groups.map(async (g) => {
      if (!sameGroup(g)) return await store.processGroups.forget(g.id);
      if (!(await endGroup(g.pgid, g.start_ticks, graceMs))) return out.left.push(g);
      out.ended.push(g);
      await store.processGroups.forget(g.id);
    }),
  );
  return out;
}
