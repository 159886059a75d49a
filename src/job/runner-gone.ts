// Whether a job's runner is provably gone, in a module of its own: ii job
// list and ii todo list ask it of every active job, and load the cleanup
// (dead-runner.ts, with the event schemas and zod) only for a job it names.
import { hostName } from '../proc/host.js';
import type { JobBrief } from '../model/backlog.js';
import { pidAlive } from '../proc/alive.js';
import { startTicks } from '../proc/group.js';
import type { AsyncStateStore } from '../state/async-api.js';

/**
 * Whether an active job's runner is provably gone: it ran on this machine
 * and its pid names no live process, or names one that started at another
 * time than the runner did (`start`, its start ticks as its heartbeat gave
 * them: the pid was reused). Only this is cleaned up by whoever meets the
 * job (a runner on another machine is judged by its heartbeat, which a
 * stalled machine can miss: that is left to ii job abandon, retry and
 * prune, which a person runs).
 */
export function runnerGone(
  job: Pick<JobBrief, 'status' | 'pid' | 'host'>,
  start: number | null = null,
  probe: { host: string; pidAlive: (pid: number) => boolean } = { host: hostName(), pidAlive },
): boolean {
  return job.status === 'active' && runnerExited(job, start, probe);
}

/**
 * Whether the runner of a job, active or ended, is provably gone: as
 * runnerGone, whatever the job's status (a job ended by a runner killed
 * before it ended the job's session).
 */
export function runnerExited(
  job: Pick<JobBrief, 'pid' | 'host'>,
  start: number | null = null,
  probe: { host: string; pidAlive: (pid: number) => boolean } = { host: hostName(), pidAlive },
): boolean {
  if (job.host !== probe.host || job.pid == null) return false;
  if (!probe.pidAlive(job.pid)) return true;
  if (start === null) return false;
  const now = startTicks(job.pid);
  return now !== null && now !== start;
}

/** runnerGone, with the runner's start ticks read from the store (a query only for a live pid of this machine). */
export async function runnerGoneIn(
  store: AsyncStateStore,
  job: Pick<JobBrief, 'id' | 'status' | 'pid' | 'host'>,
): Promise<boolean> {
  return job.status === 'active' && (await runnerExitedIn(store, job));
}

/** runnerExited, with the runner's start ticks read from the store (a query only for a live pid of this machine). */
export async function runnerExitedIn(
  store: AsyncStateStore,
  job: Pick<JobBrief, 'id' | 'pid' | 'host'>,
): Promise<boolean> {
  if (job.host !== hostName() || job.pid == null) return false;
  return runnerExited(job, pidAlive(job.pid) ? await store.jobs.runnerStart(job.id) : null);
}
