// ii init's guesses, made from what a job's workspace will have: the files
// committed at the base, not the checkout's, which may hold files git ignores
// (a package-lock.json that `*-lock.*` ignores: `npm ci` would fail in every
// workspace). Each guess says why it was made.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { detectPackageManagers, LOCKFILES } from '../session/lockfiles.js';
import { diskFiles, filesAtRev, READ_AT_BASE, type ProjectFiles } from '../session/project-files.js';
import type { Vcs } from '../vcs/vcs.js';
import { guessTests, type TestGuess } from './guess-tests.js';

export interface SetupGuess {
  command: string;
  /** The file that named it. */
  lockfile: string;
  /** Why: "package-lock.json is committed at main". */
  reason: string;
}

export interface ProjectGuess {
  tests: TestGuess[];
  setup: SetupGuess[];
  /** Where the guesses come from: "the files committed at main". */
  from: string;
  /**
   * Lockfiles in the checkout that a workspace would not have, each with
   * why (the ignore rule that hides it): not guessed from, and said so.
   */
  leftOut: string[];
}

export async function guessProject(vcs: Vcs, root: string): Promise<ProjectGuess> {
  let files: ProjectFiles;
  // How the guesses' reasons say where a file is (or is not).
  let where: { has: string; none: string; missing: string };
  let from: string;
  try {
    const base = await vcs.resolveBase(root);
    files = await filesAtRev(vcs, root, base.sha);
    where = {
      has: `is committed at ${base.ref}`,
      none: `no lockfile is committed at ${base.ref}`,
      missing: `not committed at ${base.ref}`,
    };
    from = `the files committed at ${base.ref}, which a job's workspace starts from`;
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    // No commit yet: what a first `git add -A` would commit.
    const disk = diskFiles(root);
    const names = [...new Set([...LOCKFILES, ...READ_AT_BASE, '.yarnrc.yml', 'go.mod', 'Cargo.toml'])];
    const ignored = await vcs.ignoreRules(
      root,
      names.filter((n) => disk.has(n)),
    );
    files = {
      has: (n) => disk.has(n) && !ignored.has(n),
      read: (n) => (ignored.has(n) ? null : disk.read(n)),
    };
    where = {
      has: 'is here and not ignored',
      none: 'there is no lockfile that git does not ignore',
      missing: 'ignored',
    };
    from = 'the files here that git does not ignore (there is no commit yet)';
  }
  const managers = detectPackageManagers(files);
  const setup = managers.map((m) => ({
    command: m.setup,
    lockfile: m.lockfile,
    reason:
      m.lockfile === 'package.json'
        ? `package.json names dependencies and ${where.none}`
        : `${m.lockfile} ${where.has}`,
  }));
  const hidden = LOCKFILES.filter((n) => !files.has(n) && existsSync(join(root, n)));
  const rules = await vcs.ignoreRules(root, hidden);
  const leftOut = hidden.map((n) => {
    const rule = rules.get(n);
    return `not from ${n}: it is in this checkout but ${where.missing}${rule ? ` (${rule} ignores it)` : ''}, so a workspace would not have it`;
  });
  return { tests: guessTests(files), setup, from, leftOut };
}
