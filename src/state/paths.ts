// Where incrementum keeps its state, and how a repository is named in it.
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { sha256Hex } from '../text/sha256.js';

/** `$XDG_STATE_HOME/incrementum`, else `~/.local/state/incrementum`. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_STATE_HOME && env.XDG_STATE_HOME.length > 0
      ? env.XDG_STATE_HOME
      : join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'incrementum');
}

export const dbFile = (dir: string): string => join(dir, 'state.db');
export const jobDir = (dir: string, jobId: string): string => join(dir, 'jobs', jobId);
export const eventsFile = (dir: string, jobId: string): string => join(jobDir(dir, jobId), 'events.jsonl');
export const transcriptFile = (dir: string, jobId: string, agentSessionId: string): string =>
  join(jobDir(dir, jobId), 'transcripts', `${agentSessionId}.jsonl`);
export const workspacesDir = (dir: string, slug: string): string => join(dir, 'workspaces', slug);

/**
 * A stable, readable name for a repository root: its folder name plus a hash
 * of the absolute path, so two clones named alike never share state. Callers
 * pass the repository root (git rev-parse --show-toplevel), which is why the
 * slug is the same from any subfolder.
 */
export function repoSlug(root: string): string {
  const name =
    basename(root)
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'repo';
  const hash = sha256Hex(root).slice(0, 8);
  return `${name}-${hash}`;
}
