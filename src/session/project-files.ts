// The files a guess about a project reads at its root (ii init's test command
// and setup, ii doctor's check of the setup): in a checkout on disk, or in a
// commit, which is what a job's workspace starts from. The checkout may hold
// files git ignores (a package-lock.json that `*-lock.*` ignores), which a
// workspace would not have: a guess from them makes every job fail.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Vcs } from '../vcs/vcs.js';

export interface ProjectFiles {
  /** Whether the project has an entry of this name at its root. */
  has(name: string): boolean;
  /** Its text, or null when there is none (for a commit: only the names in READ_AT_BASE). */
  read(name: string): string | null;
}

/** The files of the checkout at `root`, as they are on disk. */
export function diskFiles(root: string): ProjectFiles {
  return {
    has: (name) => existsSync(join(root, name)),
    read: (name) => {
      try {
        return readFileSync(join(root, name), 'utf8');
      } catch {
        return null;
      }
    },
  };
}

/** The files whose text the guesses read (guess-tests.ts, lockfiles.ts). */
export const READ_AT_BASE = [
  'package.json',
  'Makefile',
  'makefile',
  'GNUmakefile',
  'pyproject.toml',
] as const;

/** The files a fresh checkout of `rev` has at its root. */
export async function filesAtRev(vcs: Vcs, root: string, rev: string): Promise<ProjectFiles> {
  const names = new Set(await vcs.filesAt(root, rev));
  const texts = new Map<string, string | null>();
  await Promise.all(
    READ_AT_BASE.filter((n) => names.has(n)).map(async (n) =>
      texts.set(n, await vcs.readFileAt(root, rev, n)),
    ),
  );
  return { has: (name) => names.has(name), read: (name) => texts.get(name) ?? null };
}
