// Every process a job left behind, whatever group or session it is in. A
// process group misses what left it: an agent's `setsid sh -c 'sleep 600'`
// is a new session and a new group, and it outlived its job and even the
// prune that deleted the folder it ran in. Two marks find such a process:
// its current or root directory is inside the job's workspace, or its
// environment names the job (II_JOB_ID, set for the agent, the setup and
// the test commands and inherited by all they start, wherever they cd to).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { pidAlive } from './alive.js';
import { dirForms, linkInside } from './cwd.js';
import { startTicks, statFields } from './group.js';

/** The environment variable naming the job a process works for. */
export const JOB_ENV = 'II_JOB_ID';

export interface JobScope {
  /** Jobs whose processes these are (by JOB_ENV in their environment). */
  jobIds: readonly string[];
  /** Workspaces: a process whose cwd or root is inside one is the job's. */
  dirs: readonly string[];
  /**
   * The process groups of runners that are gone (each led by its runner,
   * started in a session of its own): what is still in one is what its
   * runner had started there, such as the git making its workspace, which
   * went on changing the workspace's registration and branch after the
   * runner was killed and its workspace handed to the next job (run-chaos:
   * "could not start: git worktree add … cannot lock ref"). Taken only while
   * the leader is gone or a zombie (Linux reuses no pid that a live group
   * still has as its id, so its members are that runner's), and only a group
   * that is its own session, as a detached runner's is: a job record in a
   * shared store names its pid, and a group of the person's own (a shell
   * pipeline whose first process ended) is in their shell's session.
   */
  groups?: readonly number[];
}

export interface FoundProcess {
  pid: number;
  /** Its start time (startTicks): with the pid, it names this process and no later one. */
  start: number | null;
  why: 'cwd' | 'root' | 'env' | 'group';
}

/**
 * This process and its ancestors: never the job's, whatever they share with
 * it (a shell cd'd into the workspace that runs `ii workspace prune`, an
 * `ii` an agent started inside its own job).
 */
function selfAndAncestors(): Set<number> {
  const out = new Set<number>();
  for (let pid = process.pid; pid > 1 && !out.has(pid);) {
    out.add(pid);
    const f = statFields(pid);
    if (!f) break;
    pid = Number(f[1]);
  }
  return out;
}

/** Whether the NUL-separated environment `env` holds exactly one of `marks` (each `II_JOB_ID=<id>\0`). */
function hasMark(env: Buffer, marks: readonly Buffer[]): boolean {
  for (const m of marks) {
    for (let at = env.indexOf(m); at !== -1; at = env.indexOf(m, at + 1))
      if (at === 0 || env[at - 1] === 0) return true;
  }
  return false;
}

/**
 * The live processes of the jobs in `scope` (not this process or its
 * ancestors; zombies run nothing). Empty where /proc cannot be read; another
 * user's processes cannot be seen (nor signalled).
 */
export function jobProcesses(scope: JobScope): FoundProcess[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  // "/" holds every process: never a workspace, whatever a record says.
  const roots = scope.dirs.flatMap(dirForms).filter((r) => r !== '/');
  const marks = scope.jobIds.filter(Boolean).map((id) => Buffer.from(`${JOB_ENV}=${id}\0`));
  const groups = new Set((scope.groups ?? []).filter((g) => g > 1 && !pidAlive(g)));
  if (roots.length === 0 && marks.length === 0 && groups.size === 0) return [];
  const skip = selfAndAncestors();
  const out: FoundProcess[] = [];
  for (const d of entries) {
    if (d.charCodeAt(0) > 57) continue; // not a pid
    const pid = Number(d);
    if (skip.has(pid)) continue;
    let why: FoundProcess['why'] | null = null;
    try {
      if (roots.length && linkInside(readlinkSync(`/proc/${d}/cwd`), roots)) why = 'cwd';
      else if (roots.length && linkInside(readlinkSync(`/proc/${d}/root`), roots)) why = 'root';
    } catch {} // gone, a zombie, or not ours
    if (!why && marks.length)
      try {
        if (hasMark(readFileSync(`/proc/${d}/environ`), marks)) why = 'env';
      } catch {} // gone, or not ours
    const f = why || groups.size ? statFields(pid) : null;
    if (!why && f && groups.has(Number(f[2])) && f[3] === f[2]) why = 'group';
    if (!why) continue;
    if (!f || f[0] === 'Z' || f[0] === 'X') continue;
    const start = Number(f[19]);
    out.push({ pid, start: Number.isFinite(start) ? start : null, why });
  }
  return out;
}

/** Sends `sig` to `p` while its pid still names the process found (not a later one that reused it). */
function signal(p: FoundProcess, sig: NodeJS.Signals): void {
  if (p.start !== null && startTicks(p.pid) !== p.start) return;
  try {
    process.kill(p.pid, sig);
  } catch {} // gone meanwhile
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface EndedProcesses {
  /** Processes that were found and signalled. */
  ended: number[];
  /** Processes still there when even SIGKILL had had its time (stuck in the kernel, or another user's). */
  left: number[];
}

/**
 * Ends every process of `scope`: SIGTERM, then SIGKILL to whatever is still
 * there after `graceMs`. It looks again as it waits, so a child started
 * meanwhile (it inherits the cwd and the environment) goes too.
 */
export async function endJobProcesses(scope: JobScope, graceMs = 3000): Promise<EndedProcesses> {
  const seen = new Map<number, FoundProcess>();
  const look = (sig: NodeJS.Signals): FoundProcess[] => {
    const now = jobProcesses(scope);
    for (const p of now) {
      const known = seen.get(p.pid);
      if (sig === 'SIGKILL' || !known || known.start !== p.start) signal(p, sig);
      seen.set(p.pid, p);
    }
    return now;
  };
  if (look('SIGTERM').length === 0) return { ended: [], left: [] };
  const termEnd = Date.now() + graceMs;
  let left = look('SIGTERM');
  while (left.length > 0 && Date.now() < termEnd) {
    await sleep(25);
    left = look('SIGTERM');
  }
  const killEnd = Date.now() + 2000;
  while (left.length > 0 && Date.now() < killEnd) {
    left = look('SIGKILL');
    if (left.length) await sleep(25);
  }
  left = jobProcesses(scope);
  return { ended: [...seen.keys()], left: left.map((p) => p.pid) };
}
