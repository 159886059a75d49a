// A sandbox policy as bubblewrap's argv. bwrap applies its mounts in order,
// so the policy's parents-first order is kept: a deeper mount covers what
// its parent gave. Whether a path exists (and is a folder) is asked of
// `kind`, so this stays a pure function of the policy and that answer.
import type { SandboxPolicy } from './policy.js';

export type PathKind = 'dir' | 'file' | null;

export interface BwrapOptions {
  /** `--disable-userns` (bubblewrap 0.8+): nothing inside may make a user namespace of its own. */
  disableUserns: boolean;
  /**
   * The user's own ids inside: when bwrap starts in the overlay's user
   * namespace (overlay.ts), where the user is root, it would otherwise
   * pass that on.
   */
  ids?: { uid: number; gid: number };
}

/**
 * The options before the command: its own user, PID (and optionally
 * network) namespace; no capabilities (as root, bwrap would otherwise leave
 * them, and with them umount of the hiding mounts); it dies with its parent,
 * and with its first process everything it started, `setsid` included.
 */
export function bwrapArgs(
  policy: SandboxPolicy,
  kind: (path: string) => PathKind,
  o: BwrapOptions,
): string[] {
  const a = ['--unshare-user', ...(o.disableUserns ? ['--disable-userns'] : [])];
  if (o.ids) a.push('--uid', String(o.ids.uid), '--gid', String(o.ids.gid));
  a.push('--unshare-pid', '--die-with-parent', '--cap-drop', 'ALL');
  // An allow list gets its own namespace too: net-host.ts binds the way out in.
  if (policy.network !== 'host') a.push('--unshare-net');
  a.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  const remount: string[] = [];
  for (const m of policy.mounts) {
    if (m.access === 'tmpfs') {
      a.push('--tmpfs', m.path);
      continue;
    }
    const k = kind(m.path);
    if (k === null) continue; // nothing there to show or hide
    // -try: a path removed between the look and the mount (another job's
    // branch deleted meanwhile) is skipped rather than failing the start.
    if (m.access === 'ro') a.push('--ro-bind-try', m.path, m.path);
    else if (m.access === 'rw') a.push('--bind-try', m.path, m.path);
    else if (k === 'dir') {
      // Empty and read-only; made read-only last, so a writable mount
      // inside it (the workspace, in the hidden state dir) has its mount point.
      a.push('--tmpfs', m.path);
      remount.push(m.path);
    } else a.push('--ro-bind', '/dev/null', m.path);
  }
  for (const p of remount.reverse()) a.push('--remount-ro', p);
  a.push('--chdir', policy.cwd);
  return a;
}
