// Process groups: signalling one, telling whether any of it still runs, and
// ending it (SIGTERM, then SIGKILL after a grace period). Every child that
// incrementum starts leads its own group (spawned detached), so ending the
// group reaches everything it started in turn.
//
// A group is only ever signalled while it is provably the one we started
// (isOurGroup): pids are reused (pid_max is 32768 on many machines, a busy
// one wraps it in minutes), and once a group has emptied its number can come
// back as somebody else's group, e.g. a shell's job whose leader has exited.
// Signalling that by number ended another demo's runners (SIGTERM) under load.
import { readdirSync, readFileSync } from 'node:fs';

/** Sends `sig` to the whole group led by `pgid`; false when the group is gone. */
export function signalGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

/** The fields of /proc/<pid>/stat after the command name, or null (no such process, or no /proc). */
export function statFields(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: split after it.
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * The start time of `pid` in clock ticks since boot (field 22 of
 * /proc/<pid>/stat), or null where it cannot be read. With the pid it names
 * one process for good: a reused pid starts later.
 */
export function startTicks(pid: number): number | null {
  const f = statFields(pid);
  const t = f ? Number(f[19]) : NaN;
  return Number.isFinite(t) ? t : null;
}

/** A process state (field 3 of /proc/<pid>/stat) of one that has exited: a zombie waiting to be reaped, or dead. */
const exited = (state: string | undefined): boolean => state === 'Z' || state === 'X';

/** Whether `pid` has exited and waits to be reaped (false where /proc cannot tell). */
export function isZombie(pid: number): boolean {
  return exited(statFields(pid)?.[0]);
}

/** Whether the stat fields `f` (statFields) are of a process that runs in group `pgid`. */
const runsIn = (f: string[] | null, pgid: number): f is string[] =>
  f !== null && Number(f[2]) === pgid && !exited(f[0]);

/** The process group of `pid`, or null. */
export function groupOf(pid: number): number | null {
  const f = statFields(pid);
  return f ? Number(f[2]) : null;
}

interface Member {
  pid: number;
  session: number;
  start: number;
}

/** How many times a whole /proc was read for a group's members (what waitGroupGone saves: the test counts it). */
let procScans = 0;
export const procScanCount = (): number => procScans;

/** The live (not zombie) processes of group `pgid`, or null where /proc cannot be read. */
function liveMembers(pgid: number): Member[] | null {
  procScans++;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const out: Member[] = [];
  for (const d of entries) {
    if (d.charCodeAt(0) > 57) continue; // not a pid
    const f = statFields(Number(d));
    if (runsIn(f, pgid)) out.push({ pid: Number(d), session: Number(f[3]), start: Number(f[19]) });
  }
  return out;
}

/**
 * True while group `pgid` is still the one whose leader started at
 * `leaderStart` (clock ticks, see startTicks) and was spawned detached, i.e.
 * as the leader of a new session. With the leader alive (or a zombie not yet
 * reaped) its start time says so. With the leader gone, its number is free
 * for reuse once the group has emptied, so what runs as group `pgid` now is
 * ours only if every process of it is in session `pgid` (inherited from our
 * leader's setsid; a shell's job, such as the group a demo runs in, is not a
 * session of its own) and started no earlier than our leader. Where /proc
 * cannot be read nothing can be told apart: any live group counts, as before.
 */
export function isOurGroup(pgid: number, leaderStart: number | null): boolean {
  const t = startTicks(pgid);
  if (t !== null) return leaderStart !== null && t === leaderStart && groupOf(pgid) === pgid;
  const members = liveMembers(pgid);
  if (members === null) return signalGroup(pgid, 0);
  if (leaderStart === null || members.length === 0) return false;
  return members.every((m) => m.session === pgid && m.start >= leaderStart);
}

/**
 * True while a live process of the group led by `pgid` exists. A zombie runs
 * nothing, so it does not count (where /proc exists to tell them apart).
 */
export function groupAlive(pgid: number): boolean {
  return groupWatch(pgid)();
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Whether `m` still runs, in group `pgid`: the same process (its start time), not a zombie. */
function stillMember(m: Member, pgid: number): boolean {
  const f = statFields(m.pid);
  return runsIn(f, pgid) && Number(f[19]) === m.start;
}

/**
 * groupAlive for a group asked again and again: a member seen running in the
 * last look is read again alone, and the whole of /proc only once none of
 * them runs. A runner waits for its agent or test command to end by asking
 * every 20 ms, and a whole look reads every process's stat file: beside 300
 * other processes (3 machines' 24 jobs on one box) a second of waiting took
 * 300 ms of CPU, 34 ms so (bench/group-wait.bench.js). The answer is the
 * same: a member read running keeps the group alive, and with none left the
 * whole look decides (it finds any process started meanwhile).
 */
export function groupWatch(pgid: number): () => boolean {
  let seen: Member[] = [];
  return () => {
    if (!signalGroup(pgid, 0)) return false;
    if (seen.some((m) => stillMember(m, pgid))) return true;
    const members = liveMembers(pgid);
    if (members === null) return true;
    seen = members;
    return members.length > 0;
  };
}

/** Polls until nothing of the group runs (true) or `ms` have passed (false). */
export async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const alive = groupWatch(pgid);
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive()) return true;
    await sleep(20);
  }
  return !alive();
}

/** A group asked to end on its own first: its input is closed, and it gets `ms` before any signal. */
export interface EndOnEof {
  close(): void;
  ms: number;
}

/**
 * SIGTERM the group, SIGKILL it if anything is left after `graceMs`; resolves
 * true once nothing of it runs (false only if even SIGKILL did not end it in
 * 2 s, e.g. a process stuck in the kernel). With `eof`, its input is closed
 * first and it gets `eof.ms` to end by itself (an agent ends at EOF; many
 * in the field ignore it, and some SIGTERM too, hence the escalation).
 * `leaderStart` is its leader's start time, taken when it was spawned:
 * before each signal the group must still be ours (isOurGroup), or it
 * counts as ended and is left alone.
 */
export async function endGroup(
  pgid: number,
  leaderStart: number | null,
  graceMs: number,
  eof?: EndOnEof,
): Promise<boolean> {
  if (eof) {
    try {
      eof.close();
    } catch {}
    if (await waitGroupGone(pgid, eof.ms)) return true;
  }
  if (!isOurGroup(pgid, leaderStart) || !signalGroup(pgid, 'SIGTERM')) return true;
  if (await waitGroupGone(pgid, graceMs)) return true;
  if (!isOurGroup(pgid, leaderStart)) return true;
  signalGroup(pgid, 'SIGKILL');
  return waitGroupGone(pgid, 2000);
}
