// What a workspace's branch is called. Each workspace's branch sits in a ref
// folder of its own (refs/heads/incrementum/workspace-<n>/), so a job's
// sandbox can make that one folder writable (git writes a ref through a
// `.lock` file and a rename in its folder) and leave everything else of
// refs/ read-only, without mounting anything over another workspace's
// branch: such a mount failed when a landing deleted that branch while the
// sandbox was being set up.

/** The branch of workspace `n`. */
export const workspaceBranch = (n: number): string => `incrementum/workspace-${n}/work`;

/** The branch name earlier versions gave workspace `n`; all in one folder, so never writable in a sandbox. */
const LEGACY = /^incrementum\/ws-\d+$/;
const CURRENT = /^incrementum\/workspace-(\d+)\/work$/;

/** A workspace branch of ours (today's name or an earlier version's): ours to delete with its workspace. */
export const isWorkspaceBranch = (name: string): boolean => LEGACY.test(name) || CURRENT.test(name);

/** The workspace number a branch of today's naming belongs to, or null. */
export function workspaceOfBranch(name: string): number | null {
  const m = CURRENT.exec(name);
  return m ? Number(m[1]) : null;
}
