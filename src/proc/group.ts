// Process groups: signalling one, telling whether any of it still runs, and
// ending it (SIGTERM, then SIGKILL after a grace period). Every child that
// incrementum starts leads its own group (spawned detached), so ending the
// group reaches everything it started in turn.
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
function statFields(pid: number): string[] | null {
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

/** The process group of `pid`, or null. */
export function groupOf(pid: number): number | null {
  const f = statFields(pid);
  return f ? Number(f[2]) : null;
}

/**
 * True while a live process of the group led by `pgid` exists. A zombie runs
 * nothing, so it does not count (where /proc exists to tell them apart).
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const d of entries) {
    if (d.charCodeAt(0) > 57) continue; // not a pid
    const f = statFields(Number(d));
    if (f && Number(f[2]) === pgid && f[0] !== 'Z' && f[0] !== 'X') return true;
  }
  return false;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until nothing of the group runs (true) or `ms` have passed (false). */
export async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!groupAlive(pgid)) return true;
    await sleep(20);
  }
  return !groupAlive(pgid);
}

/**
 * SIGTERM the group, SIGKILL it if anything is left after `graceMs`; resolves
 * true once nothing of it runs (false only if even SIGKILL did not end it in
 * 2 s, e.g. a process stuck in the kernel).
 */
export async function endGroup(pgid: number, graceMs: number): Promise<boolean> {
  if (!signalGroup(pgid, 'SIGTERM')) return true;
  if (await waitGroupGone(pgid, graceMs)) return true;
  signalGroup(pgid, 'SIGKILL');
  return waitGroupGone(pgid, 2000);
}
