// `[workspace] copy`: files the build needs but git ignores (a .env), copied
// from the repo root into a new workspace. Only ignored files: a file git
// would see would be committed by the agent's first iteration, secrets and all.
import { cpSync, existsSync } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { UserError } from '../errors.js';
import { gitIgnores } from '../vcs/git.js';

/** The listed paths that exist in `root`, after checking each is safe to copy. */
export async function checkCopies(root: string, paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const rel = normalize(p);
    if (isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`) || rel === '.')
      throw new UserError(
        `[workspace] copy lists "${p}": give a path inside the repository, relative to its root (e.g. ".env").`,
      );
    if (!existsSync(join(root, rel))) continue;
    if (!(await gitIgnores(root, rel)))
      throw new UserError(
        `[workspace] copy lists "${p}", but git does not ignore it, so the agent's first commit would include it: add it to .gitignore, or remove it from [workspace] copy in incrementum.toml.`,
      );
    out.push(rel);
  }
  return out;
}

export function copyInto(root: string, workspace: string, paths: string[]): void {
  for (const rel of paths) cpSync(join(root, rel), join(workspace, rel), { recursive: true, force: true });
}
