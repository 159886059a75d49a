// Which processes work inside a directory: the second line of defence before
// a workspace is handed out (the first is the recorded process groups, which
// miss a process started in the instant before its group was recorded).
import { readdirSync, readlinkSync } from 'node:fs';
import { resolve, sep } from 'node:path';

/**
 * Pids of processes (other than this one) whose current directory is `dir` or
 * inside it. Empty where /proc does not exist; processes of other users
 * cannot be seen and are not listed.
 */
export function processesIn(dir: string): number[] {
  const root = resolve(dir);
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const d of entries) {
    if (d.charCodeAt(0) > 57) continue; // not a pid
    const pid = Number(d);
    if (pid === process.pid) continue;
    try {
      const cwd = readlinkSync(`/proc/${d}/cwd`);
      if (cwd === root || cwd.startsWith(root + sep)) out.push(pid);
    } catch {} // gone, or not ours to look at
  }
  return out;
}
