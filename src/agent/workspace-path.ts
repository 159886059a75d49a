// Whether a path an agent names lies inside the workspace. Symlinks are
// resolved (a link inside the workspace pointing out of it is outside), and a
// path that does not exist yet is judged by its nearest existing ancestor.
import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** The real path of `p`, resolving symlinks of its existing part. */
export function realPathOf(p: string): string {
  const abs = resolve(p);
  let head = abs;
  const tail: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(head);
      return tail.length ? join(real, ...tail.reverse()) : real;
    } catch {
      const up = dirname(head);
      if (up === head) return abs;
      tail.push(head.slice(up.length + (up.endsWith(sep) ? 0 : 1)));
      head = up;
    }
  }
}

/** `rel` is inside (or is) the root: not `..`-prefixed and not absolute. */
const within = (rel: string) => rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));

export class WorkspaceRoot {
  /** The workspace as given, and with symlinks resolved. */
  readonly path: string;
  readonly real: string;

  constructor(path: string) {
    this.path = resolve(path);
    this.real = realPathOf(this.path);
  }

  /** The absolute real path of `p` (relative paths are taken from the workspace) when inside, else null. */
  resolveInside(p: string): string | null {
    if (!p) return null;
    const real = realPathOf(isAbsolute(p) ? p : join(this.path, p));
    return within(relative(this.real, real)) ? real : null;
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
