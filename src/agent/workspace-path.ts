// Whether a path an agent names lies inside the workspace. Every component is
// resolved the way the kernel would, the last one too: a symlink inside the
// workspace pointing out of it is outside, even when its target does not exist
// yet (writing through a dangling link creates the target), and `..` after a
// link climbs from the link's target, not from the link. Only what does not
// exist is taken as written.
import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** Links followed before giving up, as Linux does (ELOOP). */
const MAX_LINKS = 40;

const components = (p: string) => p.split('/').filter((c) => c !== '' && c !== '.');

/**
 * The physical path of `p` (relative to the process's cwd): every symlink
 * followed, dangling ones and chains included; what does not exist is kept
 * as named. Null when links loop or chain deeper than the kernel allows.
 */
export function realPathOf(p: string): string | null {
  // Not path.resolve: it folds `link/..` away lexically, which the kernel does not.
  const todo = components(isAbsolute(p) ? p : `${process.cwd()}/${p}`).reverse();
  let cur = '/';
  let links = 0;
  while (todo.length) {
    const c = todo.pop()!;
    if (c === '..') {
      cur = dirname(cur); // cur holds no link, so its parent is the physical one
      continue;
    }
    const next = cur === '/' ? `/${c}` : `${cur}/${c}`;
    let target: string | null = null;
    try {
      if (lstatSync(next).isSymbolicLink()) target = readlinkSync(next);
    } catch {
      // Missing (or not searchable): nothing to follow, so it stands as named.
    }
    if (target === null) {
      cur = next;
      continue;
    }
    if (++links > MAX_LINKS) return null;
    todo.push(...components(target).reverse());
    if (isAbsolute(target)) cur = '/';
  }
  return cur;
}

/** `rel` is inside (or is) the root: does not climb out and is not absolute (a name like `..x` is inside). */
const within = (rel: string) =>
  rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));

export class WorkspaceRoot {
  /** The workspace as given, and with symlinks resolved. */
  readonly path: string;
  readonly real: string;

  constructor(path: string) {
    this.path = resolve(path);
    this.real = realPathOf(this.path) ?? this.path;
  }

  /**
   * The absolute real path of `p` (relative paths are taken from the
   * workspace) when inside, else null. The answer holds only until someone
   * changes a link: writers must not follow links again (confined-fs.ts).
   */
  resolveInside(p: string): string | null {
    if (!p) return null;
    const real = realPathOf(isAbsolute(p) ? p : `${this.path}/${p}`);
    return real !== null && within(relative(this.real, real)) ? real : null;
  }

  /**
   * The workspace-relative path of `p` when it is lexically inside, else
   * null. No file system access: for the tracker's hot path.
   */
  relativeLexical(p: string): string | null {
    if (!p) return null;
    const abs = isAbsolute(p) ? resolve(p) : resolve(this.path, p);
    for (const root of [this.path, this.real]) {
      const rel = relative(root, abs);
      if (rel !== '' && within(rel)) return rel.split(sep).join('/');
    }
    return null;
  }
}
