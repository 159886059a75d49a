// ii doctor on a shared store (II_DATABASE_URL or [state] url): whether it
// connects, whether its schema is one this build can use, and whether the
// remote the machines share is there and answers. Nothing is changed: the
// schema is migrated by the first command that uses the store, not here.
import { UserError } from '../errors.js';
import { sharedIdentity } from '../state/identity.js';
import { configuredStoreUrl } from '../state/store-url.js';
import { scrubDbUrl } from '../text/db-url.js';
import { remoteUrlSync } from '../vcs/remote-config.js';
import { reachRemote } from '../vcs/remote-reach.js';
import { normaliseRemoteUrl } from '../vcs/remote-url.js';
import type { CheckResult } from './checks.js';

/** A UserError's message as a finding: its first line what was found, the rest what to do. */
function failure(name: string, message: string): CheckResult {
  const [detail, ...fix] = message.split('\n');
  return { name, ok: false, detail: detail ?? message, ...(fix.length ? { fix: fix.join('\n') } : {}) };
}

export interface StoreCheckOptions {
  /** How long a connection and `git ls-remote` may take. */
  connectTimeoutMs?: number;
  remoteTimeoutMs?: number;
}

/** The shared store's findings; none when the store is the local SQLite file (checkState covers it). */
export async function checkSharedStore(
  root: string | null,
  o: StoreCheckOptions = {},
): Promise<CheckResult[]> {
  let configured;
  try {
    configured = configuredStoreUrl();
  } catch (err) {
    if (err instanceof UserError) return [failure('store', err.message)];
    throw err;
  }
  if (!configured) return [];
  const { probePgStore } = await import('../state/pg/probe.js');
  const p = await probePgStore(configured.url, o.connectTimeoutMs);
  const from =
    configured.from === 'II_DATABASE_URL' ? 'II_DATABASE_URL' : `[state] url in ${configured.from}`;
  const results: CheckResult[] = [];
  if (p.error)
    results.push(
      failure(
        'store',
        `${p.error.split('\n')[0]} (from ${from})\n${p.error.split('\n').slice(1).join('\n')}`.trimEnd(),
      ),
    );
  else if (p.schema! > p.known)
    results.push({
      name: 'store',
      ok: false,
      detail: `${p.location}: schema version ${p.schema}, newer than this build of incrementum knows (${p.known}); left untouched`,
      fix: 'Upgrade incrementum on this machine (git pull && npm install) to the version the other machines run.',
    });
  else
    results.push({
      name: 'store',
      ok: true,
      detail: `${p.location} (PostgreSQL ${p.server}, from ${from}): ${
        p.schema === 0
          ? 'an empty database; its schema is made on first use'
          : p.schema === p.known
            ? `schema version ${p.schema}`
            : `schema version ${p.schema}, migrated to ${p.known} on first use`
      }`,
    });
  if (root) results.push(await checkRemote(root, o.remoteTimeoutMs));
  return results;
}

/** The remote the machines share: set in this clone, and answering. */
async function checkRemote(root: string, timeoutMs?: number): Promise<CheckResult> {
  let id;
  try {
    id = sharedIdentity(root);
  } catch (err) {
    if (err instanceof UserError) return failure('remote', err.message);
    throw err;
  }
  const name = id.remote;
  const named = `this repository is ${id.slug} in the store (${id.by === 'project' ? '[state] project' : id.by === 'remote' ? `remote ${id.source}` : 'its path'})`;
  const url = remoteUrlSync(root, name);
  if (!url)
    return {
      name: 'remote',
      ok: false,
      detail: `no remote "${name}" in this clone; ${named}${id.by === 'path' ? ', so no other clone shares its todos' : ''}`,
      fix: `Add the remote the other machines use (git remote add ${name} <url>), or set [remote] name in incrementum.toml to the one they share: jobs' commits are shared through it.`,
    };
  const shown = normaliseRemoteUrl(url, root) ?? name;
  const reach = await reachRemote(root, name, timeoutMs);
  if (!reach.ok)
    return {
      name: 'remote',
      ok: false,
      detail: `${name} (${shown}) did not answer: ${scrubDbUrl((reach.why ?? '').replaceAll(url, shown), url)}`,
      fix: `Check the URL and your access from this machine (an ssh key, a credential helper): git ls-remote ${name}`,
    };
  return { name: 'remote', ok: true, detail: `${name} (${shown}) answers; ${named}` };
}
