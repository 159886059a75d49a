// How a repository is named in the store. On the local SQLite store, by its
// clone's path (repoSlug: two clones never share todos, and the state every
// user already has stays where it is). In a shared PostgreSQL store, by what
// all its clones share: `[state] project` in the repository's config, else
// its remote's URL normalised (`[remote] name`, default origin), else, for a
// repository with neither, its path as on SQLite.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { PROJECT_NAME, PROJECT_NAME_HELP } from '../model/project-name.js';
import { normaliseRemoteUrl } from '../vcs/remote-url.js';
import { remoteUrlSync } from '../vcs/remote-config.js';
import { repoSlug } from './paths.js';
import { userConfigFile } from './store-url.js';
import { parseTomlLazily } from './lazy-toml.js';

export interface SharedIdentity {
  /** The repository's name in the store (also a folder name). */
  slug: string;
  /** What it was made from. */
  by: 'project' | 'remote' | 'path';
  /** The project name, the normalised remote URL (no credentials), or the root. */
  source: string;
  /** The remote the URL came from, or would have ([remote] name). */
  remote: string;
}

/** A config file's [state] project and [remote] name, parsed only when it may hold them (start-up loads no zod). */
function settingsIn(file: string): { project?: unknown; remote?: unknown } | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  if (!/\b(project|name)\b/.test(text)) return {};
  let raw: { state?: { project?: unknown }; remote?: { name?: unknown } };
  try {
    raw = parseTomlLazily(text) as typeof raw;
  } catch (err) {
    throw new UserError(`config ${file} is not valid TOML: ${(err as Error).message}`);
  }
  return { project: raw.state?.project, remote: raw.remote?.name };
}

/**
 * [state] project from the repository's config (the user's would name every
 * repository alike) and [remote] name from it, else from the user's, as the
 * config loader merges them.
 */
function repoSettings(root: string): { project?: string; remote: string } {
  const file = [join(root, 'incrementum.toml'), join(root, '.incrementum', 'config.toml')].find((f) =>
    existsSync(f),
  );
  const repo = file ? settingsIn(file) : null;
  const project = repo?.project;
  if (project !== undefined && (typeof project !== 'string' || !PROJECT_NAME.test(project)))
    throw new UserError(`config ${file}: [state] project ${PROJECT_NAME_HELP}.`);
  const remote = [repo?.remote, settingsIn(userConfigFile())?.remote].find(
    (r): r is string => typeof r === 'string' && r.trim().length > 0,
  );
  return { ...(typeof project === 'string' ? { project } : {}), remote: remote?.trim() ?? 'origin' };
}

/** A folder-safe name for a normalised remote URL: its last part and a hash of the whole, as repoSlug does for a path. */
export function remoteSlug(normalised: string): string {
  const last = normalised.split('/').filter(Boolean).pop() ?? '';
  const name =
    last
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[-.]+|-+$/g, '') || 'repo';
  return `${name}-${createHash('sha256').update(normalised).digest('hex').slice(0, 8)}`;
}

/** The repository's name in a shared store (see the top of this file). */
export function sharedIdentity(root: string): SharedIdentity {
  const s = repoSettings(root);
  if (s.project) return { slug: s.project, by: 'project', source: s.project, remote: s.remote };
  const url = remoteUrlSync(root, s.remote);
  const normalised = url ? normaliseRemoteUrl(url, root) : null;
  if (normalised) return { slug: remoteSlug(normalised), by: 'remote', source: normalised, remote: s.remote };
  return { slug: repoSlug(root), by: 'path', source: root, remote: s.remote };
}
