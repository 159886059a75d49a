// Which processes work inside a directory: the second line of defence before
// a workspace is handed out (the first is the recorded process groups, which
// miss a process started in the instant before its group was recorded, and
// one that left its group with setsid).
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';

/** `dir` as given and as the kernel names it (/proc shows real paths): the forms a link can take. */
export function dirForms(dir: string): string[] {
  const out = [resolve(dir)];
  try {
    const real = realpathSync(dir);
    if (real !== out[0]) out.push(real);
  } catch {} // gone: /proc shows it as it was, with " (deleted)" after it
  return out;
}

/** Whether a /proc link target (a cwd or a root) is one of `roots` or inside it; a deleted one counts. */
export function linkInside(target: string, roots: readonly string[]): boolean {
  const t = target.endsWith(' (deleted)') ? target.slice(0, -' (deleted)'.length) : target;
  return roots.some((r) => t === r || t.startsWith(r + sep));
}

/**
 * Pids of processes (other than this one) whose current directory or root
 * directory (chroot, a sandbox) is `dir` or inside it. Empty where /proc
 * does not exist; processes of other users cannot be seen and are not listed.
 */
export function processesIn(dir: string): number[] {
  const roots = dirForms(dir);
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
      if (
        linkInside(readlinkSync(`/proc/${d}/cwd`), roots) ||
        linkInside(readlinkSync(`/proc/${d}/root`), roots)
      )
        out.push(pid);
    } catch {} // gone, or not ours to look at
  }
  return out;
}
