// Dependencies by overlay ([workspace] reuse = "overlay"): the checkout's
// node_modules (or another dependency folder) is mounted read-only beneath
// an upper layer of the workspace's own, so a workspace has its
// dependencies in milliseconds whatever their size, and what a job writes
// there lands in its upper layer, never in the user's copy.
//
// bubblewrap 0.8 (Debian 12's) has no overlay mount, so the overlay is made
// one step before it: `unshare` makes a user and mount namespace, mounts the
// overlay at the workspace's folder there, and execs bwrap, whose recursive
// bind of the workspace carries the mount inside. Nothing reaches the
// host's mount table: outside, the workspace holds an empty folder (a mount
// point git does not see). The upper layers live in incrementum's state dir,
// hidden from the job and removed with the workspace.
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';

export interface DependencyOverlay {
  /** The workspace's dependency folder, where it is mounted. */
  path: string;
  /** The checkout's folder, read-only beneath. */
  lower: string;
  /** The workspace's own layer: what a job writes there lands here. */
  upper: string;
  /** Overlayfs's scratch folders: one per mount (two live mounts must not share one). */
  workRoot: string;
}

/**
 * Where a workspace's overlays live: beside the workspaces in the state dir
 * (`overlays/<slug>/ws-N` for `workspaces/<slug>/ws-N`), never inside the
 * workspaces folder, whose every entry a prune takes for a workspace.
 */
export function overlayHome(stateDir: string, workspace: string): string {
  const ws = resolve(workspace);
  const inside = (dir: string) => {
    const rel = relative(join(resolve(stateDir), dir), ws);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : null;
  };
  // (A slug always ends in -<hash>: never "landing" or "other".)
  const job = inside('workspaces');
  if (job) return join(stateDir, 'overlays', job);
  const landing = inside('landing');
  if (landing) return join(stateDir, 'overlays', 'landing', landing);
  // A scratch workspace elsewhere (ii doctor --tests): named by its path.
  return join(stateDir, 'overlays', 'other', createHash('sha256').update(ws).digest('hex').slice(0, 16));
}

/** A dependency folder as one path segment (node_modules; packages/a/node_modules as packages%2Fa%2Fnode_modules). */
const encode = (dir: string) => encodeURIComponent(dir);

/** A relative folder inside the workspace, or null (absolute, `..`, empty). */
export function safeDependencyDir(dir: string): string | null {
  const n = normalize(dir).replace(/\/+$/, '');
  if (!n || n === '.' || isAbsolute(n) || n.split(sep).some((s) => s === '..' || s === '.git')) return null;
  return n;
}

export function overlayFor(
  stateDir: string,
  workspace: string,
  repoRoot: string,
  dir: string,
): DependencyOverlay {
  const home = join(overlayHome(stateDir, workspace), encode(dir));
  return {
    path: join(workspace, dir),
    lower: join(repoRoot, dir),
    upper: join(home, 'upper'),
    workRoot: join(home, 'work'),
  };
}

/** The overlays set up for `workspace` (a folder with an upper layer each). */
export function activeOverlays(stateDir: string, workspace: string, repoRoot: string): DependencyOverlay[] {
  let names: string[];
  try {
    names = readdirSync(overlayHome(stateDir, workspace));
  } catch {
    return [];
  }
  const out: DependencyOverlay[] = [];
  for (const name of names.sort()) {
    let dir: string | null;
    try {
      dir = safeDependencyDir(decodeURIComponent(name));
    } catch {
      continue;
    }
    if (!dir) continue;
    const o = overlayFor(stateDir, workspace, repoRoot, dir);
    if (isDir(o.upper)) out.push(o);
  }
  return out;
}

const isDir = (p: string): boolean => {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Removes a folder overlayfs wrote in: its work folders are left mode 000,
 * which the owner must open before it can empty them.
 */
function removeTree(p: string): void {
  try {
    rmSync(p, { recursive: true, force: true });
    return;
  } catch {}
  const open = (d: string) => {
    try {
      chmodSync(d, 0o700);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) open(join(d, e.name));
    } catch {}
  };
  open(p);
  rmSync(p, { recursive: true, force: true });
}

/** Removes one dependency folder's overlay (its upper layer: what the job wrote there). */
export function removeOverlay(o: DependencyOverlay): void {
  removeTree(join(o.upper, '..'));
}

/** Removes every overlay of `workspace`: with the workspace, and when a new job resets it. */
export function removeOverlays(stateDir: string, workspace: string): void {
  removeTree(overlayHome(stateDir, workspace));
}

/**
 * Removes the overlays of `slug`'s workspaces whose folder is gone (a
 * workspace removed by a runner that died before removing its overlay).
 */
export function removeOrphanOverlays(stateDir: string, slug: string): string[] {
  const dir = join(stateDir, 'overlays', slug);
  const gone: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {}
  for (const name of names)
    if (!isDir(join(stateDir, 'workspaces', slug, name))) {
      removeTree(join(dir, name));
      gone.push(name);
    }
  return gone;
}

/** Characters the mount options cannot carry unescaped (`,` separates options, `:` lower layers). */
const UNSAFE = /[,:\\"\n]/;

/** Why `o` cannot be mounted (a path the mount options cannot hold), or null. */
export function overlayBlocker(o: DependencyOverlay): string | null {
  for (const p of [o.lower, o.upper, o.workRoot])
    if (UNSAFE.test(p)) return `${p} has a character overlay mount options cannot hold (, : \\ ")`;
  return null;
}

/** The overlay's mount options, with `work` its own scratch folder. */
export function overlayOptions(o: DependencyOverlay, work: string): string {
  // userxattr: a user namespace cannot write trusted.* attributes; index=off:
  // the agent's and a test's sandboxes mount the same upper layer at once.
  return `lowerdir=${o.lower},upperdir=${o.upper},workdir=${work},userxattr,index=off`;
}

/**
 * Mounts each `(options, path)` then execs `inner`. A constant script: the
 * paths are its arguments, never part of its text.
 */
const SCRIPT = [
  'mount=$1; n=$2; shift 2',
  'while [ "$n" -gt 0 ]; do',
  '  "$mount" -t overlay overlay -o "$1" "$2" || exit 125',
  '  shift 2; n=$((n - 1))',
  'done',
  'exec "$@"',
].join('\n');

export interface OverlayTools {
  unshare: string;
  mount: string;
}

/** `inner` (bwrap and its arguments) started with `mounts` made beneath it. */
export function overlayArgv(
  tools: OverlayTools,
  mounts: readonly { options: string; path: string }[],
  inner: readonly string[],
): { command: string; args: string[] } {
  return {
    command: tools.unshare,
    args: [
      '--user',
      '--map-root-user',
      '--mount',
      '--',
      '/bin/sh',
      '-c',
      SCRIPT,
      'sh',
      tools.mount,
      String(mounts.length),
      ...mounts.flatMap((m) => [m.options, m.path]),
      ...inner,
    ],
  };
}

/** A fresh scratch folder for one mount of `o`. */
export function newWorkDir(o: DependencyOverlay): string {
  mkdirSync(o.workRoot, { recursive: true });
  for (let i = 0; ; i++) {
    const d = join(o.workRoot, `${process.pid}-${Date.now().toString(36)}-${i}`);
    try {
      mkdirSync(d);
      return d;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
