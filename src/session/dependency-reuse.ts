// Dependencies from the user's checkout instead of a fresh install: when a
// workspace's lockfile is byte-for-byte the checkout's, and the checkout's
// install is at least as new as that lockfile, its node_modules is what the
// install would produce, so it is cloned into the workspace.
//
// How: a copy-on-write clone (`cp --reflink=auto`: btrfs, XFS, APFS share
// blocks until one side writes), which silently becomes a plain copy on
// filesystems without reflinks (ext4 copies ~700 MB of node_modules in ~3 s).
// Hard links are opt-in only (`reuse = "hardlink"`): a hard link is the same
// inode, so a test, a postinstall script or an agent that writes a file inside
// node_modules in place would change the user's own copy. In the sandbox,
// "overlay" copies nothing: the job's sandbox mounts the checkout's folder
// beneath an upper layer of the workspace's own (src/proc/sandbox/overlay.ts).
import { execFile } from 'node:child_process';
import { constants, existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { isInside } from './paths.js';
import type { PackageManager } from './lockfiles.js';

export type ReuseMode = 'overlay' | 'clone' | 'hardlink' | 'off';

export type ReuseResult =
  | { ok: true; dir: string; method: 'overlay' | 'clone' | 'hardlink' | 'copy'; duration_ms: number }
  /** overlay: the overlay itself failed (no sandbox, the mount), where a clone may still do. */
  | { ok: false; reason: string; overlay?: true };

/** Files whose presence inside node_modules says an install finished, per package manager. */
const INSTALL_MARKERS = ['.package-lock.json', '.modules.yaml', '.yarn-integrity', '.yarn-state.yml'];

const sameBytes = (a: string, b: string): boolean => {
  try {
    return readFileSync(a).equals(readFileSync(b));
  } catch {
    return !existsSync(a) && !existsSync(b);
  }
};

const mtime = (p: string): number => {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
};

/** Why the checkout's dependencies cannot stand in for an install in `ws`; null when they can. */
export function reuseBlocker(checkout: string, ws: string, pm: PackageManager): string | null {
  const dir = pm.dependencyDir;
  if (!dir) return `${pm.lockfile}: its dependencies are not reusable from another folder`;
  const src = join(checkout, dir);
  let st;
  try {
    st = lstatSync(src);
  } catch {
    return `the checkout has no ${dir}`;
  }
  if (!st.isDirectory()) return `the checkout's ${dir} is not a plain folder`;
  for (const f of [pm.lockfile, 'package.json'])
    if (!sameBytes(join(checkout, f), join(ws, f))) return `${f} differs from the checkout's`;
  // An install newer than the lockfile: a checkout whose lockfile was pulled
  // but not yet installed has node_modules older than it.
  const installed = Math.max(mtime(src), ...INSTALL_MARKERS.map((m) => mtime(join(src, m))));
  if (installed < mtime(join(checkout, pm.lockfile)))
    return `the checkout's ${dir} is older than its ${pm.lockfile} (not installed since it changed)`;
  return null;
}

function run(cmd: string, args: string[], signal?: AbortSignal): Promise<void> {
  return new Promise((res, rej) =>
    execFile(cmd, args, { signal, maxBuffer: 1 << 20 }, (err, _out, stderr) =>
      err ? rej(new Error(String(stderr).trim() || err.message)) : res(),
    ),
  );
}

/**
 * A symlink with an absolute target inside the checkout would let the
 * workspace write into the user's files: such a clone is not used.
 */
function escapingLink(dir: string, checkout: string): string | null {
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isSymbolicLink()) continue;
    const p = join(e.parentPath, e.name);
    const target = readlinkSync(p);
    if (isAbsolute(target) && isInside(checkout, resolve(target))) return `${p} -> ${target}`;
  }
  return null;
}

async function copyTree(src: string, dst: string, mode: 'clone' | 'hardlink', signal?: AbortSignal) {
  if (mode === 'hardlink') {
    try {
      await run('cp', ['-al', src, dst], signal);
      return 'hardlink' as const;
    } catch {
      await rm(dst, { recursive: true, force: true }); // e.g. another filesystem: clone instead
    }
  }
  try {
    await run('cp', ['-a', '--reflink=auto', src, dst], signal);
    return 'clone' as const;
  } catch {
    // Not GNU cp (macOS, busybox): Node's copy asks for a clone, else copies.
    await rm(dst, { recursive: true, force: true });
    await cp(src, dst, {
      recursive: true,
      verbatimSymlinks: true,
      preserveTimestamps: true,
      mode: constants.COPYFILE_FICLONE,
    });
    return 'copy' as const;
  }
}

/** Clones the checkout's dependency folder into `ws`; on any failure nothing is left half-copied. */
export async function reuseDependencies(o: {
  checkout: string;
  workspace: string;
  pm: PackageManager;
  mode: ReuseMode;
  /** Mounts the checkout's `dir` beneath the workspace's (the job's sandbox); needed for "overlay". */
  overlay?: (dir: string) => Promise<{ ok: true } | { ok: false; reason: string }>;
  signal?: AbortSignal;
}): Promise<ReuseResult> {
  if (o.mode === 'off') return { ok: false, reason: '[workspace] reuse = "off"' };
  if (resolve(o.checkout) === resolve(o.workspace))
    return { ok: false, reason: 'the workspace is the checkout' };
  const blocker = reuseBlocker(o.checkout, o.workspace, o.pm);
  if (blocker) return { ok: false, reason: blocker };
  const dir = o.pm.dependencyDir!;
  const src = join(o.checkout, dir);
  const dst = join(o.workspace, dir);
  const started = Date.now();
  if (o.mode === 'overlay') {
    if (!o.overlay) return { ok: false, reason: 'agents are not sandboxed', overlay: true };
    const r = await o.overlay(dir);
    return r.ok
      ? { ok: true, dir, method: 'overlay', duration_ms: Date.now() - started }
      : { ok: false, reason: r.reason, overlay: true };
  }
  try {
    await rm(dst, { recursive: true, force: true });
    const method = await copyTree(src, dst, o.mode, o.signal);
    const link = escapingLink(dst, o.checkout);
    if (link) throw new Error(`it links into the checkout (${link})`);
    return { ok: true, dir, method, duration_ms: Date.now() - started };
  } catch (err) {
    await rm(dst, { recursive: true, force: true }).catch(() => {});
    return { ok: false, reason: `copying ${dir} failed: ${(err as Error).message.split('\n')[0]}` };
  }
}
