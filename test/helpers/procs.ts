// Process checks for "no process left behind" assertions. A killed process
// stays a zombie until its (re)parent reaps it, which here can take a second:
// a zombie runs nothing, so it counts as gone.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  pgid: number;
}

function stat(pid: number): ProcStat | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: split after it.
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { pid, state: rest[0]!, ppid: Number(rest[1]), pgid: Number(rest[2]) };
  } catch {
    return null;
  }
}

/** True while `pid` exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  const s = stat(pid);
  return s != null && s.state !== 'Z' && s.state !== 'X';
}

/** Pids of live (non-zombie) processes whose command line contains `needle`. */
export function runningWith(needle: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    const pid = Number(d);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(needle) && isRunning(pid)) out.push(pid);
    } catch {}
  }
  return out;
}

/**
 * Pids of live processes working in `dir` or below it (their cwd). An agent
 * and the test commands run in the job's workspace, whatever their command
 * line says, so this finds what a job left behind.
 */
export function runningIn(dir: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    const pid = Number(d);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if ((cwd === dir || cwd.startsWith(dir + '/')) && isRunning(pid)) out.push(pid);
    } catch {}
  }
  return out;
}

/** Pids of live processes in process group `pgid` (a detached runner and whatever it started). */
export function runningInGroup(pgid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    const pid = Number(d);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s && s.pgid === pgid && s.state !== 'Z' && s.state !== 'X') out.push(pid);
  }
  return out;
}

/**
 * The live processes whose command line or working directory names `dir`
 * (a test's temp dir): what a command under test left running there, git and
 * whatever git started (a remote's upload-pack or receive-pack) included.
 */
export function runningUnder(dir: string): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const d of readdirSync('/proc')) {
    const pid = Number(d);
    if (!Number.isInteger(pid) || pid === process.pid || !isRunning(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {}
      if (cmd.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`)) out.push({ pid, cmd });
    } catch {} // gone meanwhile
  }
  return out;
}
