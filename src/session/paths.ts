// Where a repo's workspaces live and what their branches are called.
import { isAbsolute, join, relative } from 'node:path';
import { workspacesDir } from '../state/paths.js';

export { workspaceBranch } from '../model/workspace-branch.js';
export const workspacePathFor = (stateDir: string, slug: string, n: number): string =>
  join(workspacesDir(stateDir, slug), String(n));

/** True when `path` is strictly inside `dir`. */
export function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
