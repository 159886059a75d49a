// Paths an agent is never given through ACP, inside the workspace or not: the
// workspace's `.git` (the link to its worktree git dir, which incrementum's
// own git commands follow: repointed at the user's repository, they would
// commit onto the user's branch and rewrite the user's index) and anything in
// a git directory (a nested repository's, a submodule's). The agent changes
// the project's files; version control is incrementum's.
import { lstatSync } from 'node:fs';
import { relative, sep } from 'node:path';
import type { WorkspaceRoot } from './workspace-path.js';

/**
 * `.git` in any letter case: on a case-insensitive file system (macOS, Windows)
 * `.GIT` is the same entry, and git itself refuses to check such a name out
 * anywhere (core.protectNTFS / protectHFS), so no project file is lost to it.
 */
const isDotGit = (name: string) => name.toLowerCase() === '.git';

const kindOf = (p: string): 'file' | 'dir' | 'link' | null => {
  try {
    const st = lstatSync(p);
    return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : null;
  } catch {
    return null;
  }
};

/**
 * Whether `dir` is a git directory by git's own test (setup.c
 * is_git_directory): a HEAD, and objects and refs directories, or a
 * `commondir` file naming where they are (a worktree's git dir). A bare
 * repository, or a git dir kept apart from its checkout, has no `.git` in its name.
 */
function isGitDir(dir: string): boolean {
  const head = kindOf(`${dir}/HEAD`);
  if (head !== 'file' && head !== 'link') return false;
  if (kindOf(`${dir}/commondir`) === 'file') return true;
  return kindOf(`${dir}/objects`) === 'dir' && kindOf(`${dir}/refs`) === 'dir';
}

/**
 * Why the agent may not read or write `real` (a real path resolveInside
 * returned, every link already followed, `..` folded), or null when it may.
 * Costs one lstat per directory below the workspace root, two or three more
 * for a directory holding a HEAD.
 */
export function gitPathRefusal(ws: WorkspaceRoot, real: string): string | null {
  const names = relative(ws.real, real).split(sep).filter(Boolean);
  if (names.length === 1 && isDotGit(names[0]!))
    return (
      "it is the workspace's link to its git repository, which incrementum's own git commands follow; " +
      'agents change project files only (incrementum commits them)'
    );
  const at = names.findIndex(isDotGit);
  if (at >= 0)
    return `${names.slice(0, at + 1).join('/')} is a git directory; agents change project files only, never a repository's internals`;
  // The directories above the file, the workspace root aside (a checkout, not a git dir).
  let dir = ws.real;
  for (let i = 0; i < names.length - 1; i++) {
    dir += `${sep}${names[i]}`;
    if (isGitDir(dir))
      return `${names.slice(0, i + 1).join('/')} is a git directory; agents change project files only, never a repository's internals`;
  }
  return null;
}
