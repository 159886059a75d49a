// Which setup a workspace last had: a small file in the worktree's own git
// dir (like the change file in src/vcs/git.ts), so the user's checkout and
// the agent never see it, and it goes away with the worktree. A session that
// resets the workspace (git clean -x takes node_modules with it) clears it.
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const RECORD_FILE = 'incrementum-setup.json';

export interface SetupRecord {
  /** lockfileHash() of the workspace when its setup last succeeded. */
  hash: string;
  at: string;
}

/** The worktree's git dir, from its `.git` file (or folder); null when it has neither. */
function gitDir(ws: string): string | null {
  const dotGit = join(ws, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return resolve(dotGit);
    const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
    return m ? resolve(ws, m[1]!.trim()) : null;
  } catch {
    return null;
  }
}

export function readSetupRecord(ws: string): SetupRecord | null {
  const dir = gitDir(ws);
  if (!dir) return null;
  try {
    const v = JSON.parse(readFileSync(join(dir, RECORD_FILE), 'utf8')) as Partial<SetupRecord>;
    return typeof v.hash === 'string' ? { hash: v.hash, at: String(v.at ?? '') } : null;
  } catch {
    return null; // missing or torn: set up again, which is always safe
  }
}

export function writeSetupRecord(ws: string, hash: string): void {
  const dir = gitDir(ws);
  if (!dir) return;
  const rec: SetupRecord = { hash, at: new Date().toISOString() };
  writeFileSync(join(dir, RECORD_FILE), JSON.stringify(rec) + '\n');
}

export function clearSetupRecord(ws: string): void {
  const dir = gitDir(ws);
  if (dir) rmSync(join(dir, RECORD_FILE), { force: true });
}
