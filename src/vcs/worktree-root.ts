// The repository a linked worktree belongs to, read from its `.git` file
// (`gitdir: <root>/.git/worktrees/<name>`): how `ii state migrate` finds the
// clones its store's repositories came from, through their workspaces.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The main checkout's root of the worktree at `path`, or null (not a linked worktree, or one not in <root>/.git). */
export function worktreeMainRoot(path: string): string | null {
  let text: string;
  try {
    text = readFileSync(resolve(path, '.git'), 'utf8');
  } catch {
    return null;
  }
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return null;
  const gitDir = resolve(path, m[1]!);
  const w = /^(.*)\/\.git\/worktrees\/[^/]+$/.exec(gitDir);
  return w ? w[1]! || '/' : null;
}
