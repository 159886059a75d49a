// Where a workspace's git state lives, read from its files (no git process:
// this runs before every sandboxed spawn, and git itself would follow a
// `.git` the agent may have rewritten; the link check in src/vcs guards git).
import { readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { workspaceOfBranch } from '../../model/workspace-branch.js';
import type { GitLayout } from './policy.js';

const read = (p: string): string | null => {
  try {
    return readFileSync(p, 'utf8').trim();
  } catch {
    return null;
  }
};

/** The layout of the worktree at `workspace`, or null when it is not one git made (nothing of git is then writable). */
export function gitLayout(workspace: string): GitLayout | null {
  const dotGit = join(workspace, '.git');
  let isDir: boolean;
  try {
    isDir = statSync(dotGit).isDirectory();
  } catch {
    return null;
  }
  // A workspace with a repository of its own: it is all in the writable workspace.
  if (isDir) return { commonDir: dotGit, adminDir: null, dotGit, branchRef: null };
  const link = /^gitdir: (.+)$/m.exec(read(dotGit) ?? '')?.[1];
  if (!link) return null;
  const adminDir = resolve(workspace, link);
  const common = read(join(adminDir, 'commondir'));
  if (!common) return null;
  const commonDir = resolve(adminDir, common);
  const head = /^ref: refs\/heads\/(\S+)$/.exec(read(join(adminDir, 'HEAD')) ?? '')?.[1] ?? null;
  // Only the branch of this very workspace (workspaces/<repo>/<n> is on
  // incrementum/workspace-<n>/work): HEAD is in the writable admin dir, so an
  // agent could point it at another branch to have that one's folder made
  // writable at its next spawn.
  const n = /^\d+$/.test(basename(workspace)) ? Number(basename(workspace)) : null;
  const own = head !== null && n !== null && workspaceOfBranch(head) === n;
  return { commonDir, adminDir, dotGit, branchRef: own ? `refs/heads/${head}` : null };
}
