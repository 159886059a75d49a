// A renamed repository's workspaces follow its new name (ii state migrate):
// they live in the state dir under the repository's name
// (workspaces/<name>/<n>), and every command looks for them, hands them out,
// reuses, lands from and prunes them there. Left under the old name, a
// migrated job's workspace would be neither reused nor pruned. Each worktree
// is moved by git (both its links follow), before the copy, and moved back
// if the copy fails; what else is in the old folder (a directory with no
// record, a sandbox's overlays) goes along, so nothing is left behind under
// a name no command uses any more.
import { existsSync, readdirSync, renameSync, rmdirSync, mkdirSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { workspacesDir } from './paths.js';

/** Moves a worktree (Vcs.moveWorkspace). */
export type MoveWorktree = (root: string, from: string, to: string) => Promise<void>;

export interface WorkspaceMoves {
  /** Old path → new, for the records (pg/copy.ts CopyOptions.paths). */
  paths: Record<string, string>;
  /** Puts everything back where it was (the copy failed). */
  undo(): Promise<void>;
}

const inside = (dir: string, path: string): boolean => {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/** Renames what is in `from` into `to`, entry by entry (never over one there); `from` goes once empty. */
function moveEntries(from: string, to: string, done: [string, string][], stay: Set<string>): void {
  if (!existsSync(from)) return;
  for (const name of readdirSync(from)) {
    const target = join(to, name);
    if (existsSync(target) || stay.has(join(from, name))) continue;
    mkdirSync(to, { recursive: true });
    renameSync(join(from, name), target);
    done.push([join(from, name), target]);
  }
  try {
    rmdirSync(from); // only when empty
  } catch {}
}

/**
 * Moves the workspaces of each renamed repository (`recorded`: the paths
 * the store records for its old name) from workspaces/<from> to
 * workspaces/<to>, with the overlays beside them.
 */
export async function moveWorkspaces(
  stateDir: string,
  renamed: readonly { from: string; to: string; root: string }[],
  recorded: ReadonlyMap<string, readonly string[]>,
  move: MoveWorktree,
): Promise<WorkspaceMoves> {
  const paths: Record<string, string> = {};
  const worktrees: [root: string, from: string, to: string][] = [];
  const renames: [string, string][] = [];
  const stay = new Set<string>();
  const undo = async () => {
    for (const [from, to] of renames.splice(0).reverse()) renameSync(to, from);
    for (const [root, from, to] of worktrees.splice(0).reverse()) await move(root, to, from);
    // The new names' folders, emptied again (rmdir takes only an empty one).
    for (const r of renamed)
      for (const d of [workspacesDir(stateDir, r.to), join(stateDir, 'overlays', r.to)])
        try {
          rmdirSync(d);
        } catch {}
  };
  try {
    for (const r of renamed) {
      const oldDir = workspacesDir(stateDir, r.from);
      const newDir = workspacesDir(stateDir, r.to);
      if (!existsSync(oldDir)) continue;
      for (const path of recorded.get(r.from) ?? []) {
        if (!inside(oldDir, path) || !existsSync(path)) continue;
        const target = join(newDir, relative(oldDir, path));
        try {
          if (existsSync(target)) throw new Error(`${target} is taken`);
          await move(r.root, path, target);
        } catch {
          // Not a worktree git can move (locked, its link broken), or its
          // place is taken: kept where it is, record and all.
          stay.add(path);
          continue;
        }
        worktrees.push([r.root, path, target]);
        paths[path] = target;
      }
      // Left: folders with no record (debris the new name's prune clears).
      moveEntries(oldDir, newDir, renames, stay);
      moveEntries(join(stateDir, 'overlays', r.from), join(stateDir, 'overlays', r.to), renames, stay);
    }
  } catch (err) {
    await undo().catch(() => {});
    throw err;
  }
  return { paths, undo };
}
