// A job run on another machine has its commits in that machine's repository;
// its runner pushed them to the shared remote (src/job/ref-pusher.ts). A diff
// or a landing here that lacks them fetches that job's refs, and only those,
// first (ii job diff, the board's diff view, ii job land).
import { hostName } from '../proc/host.js';
import { UserError } from '../errors.js';
import type { Config } from '../model/config.js';
import type { Job } from '../model/job.js';
import { fetchRemote, type RemoteSpec } from '../model/remote.js';
import { databaseUrl } from '../state/open-async.js';
import { hasRemoteSync } from '../vcs/remote-config.js';
import type { RemoteVcs } from '../vcs/remote-vcs.js';

/**
 * Makes `commits` (of `job`) present in the repository at `root`: nothing
 * when they are; else the job's refs fetched from `remoteOf()` ('fetched'), and a
 * UserError saying what is wrong when the fetch fails or brings them not.
 * With no remote (nothing shared), nothing is fetched: 'missing', and the
 * caller's git says what it says today.
 */
export async function fetchJobCommits(
  vcs: Pick<RemoteVcs, 'missingCommits' | 'fetchChangeRefs'>,
  root: string,
  job: Job,
  commits: readonly (string | null | undefined)[],
  remoteOf: () => RemoteSpec | null | Promise<RemoteSpec | null>,
  onFetch?: (remote: RemoteSpec) => void,
): Promise<'present' | 'fetched' | 'missing'> {
  const wanted = commits.filter((c): c is string => !!c);
  if ((await vcs.missingCommits(root, wanted)).length === 0) return 'present';
  // Asked only now: the config is read only when something is missing.
  const remote = await remoteOf();
  if (!remote) return 'missing';
  const ids = job.changes.map((c) => c.change_id);
  const ran = job.host ? ` on ${job.host}` : '';
  if (ids.length === 0)
    throw new UserError(`job ${job.id} has no changes on its record, so there are no refs of it to fetch.`);
  onFetch?.(remote);
  const r = await vcs.fetchChangeRefs(root, remote, ids);
  if (!r.ok)
    throw new UserError(
      `job ${job.id} ran elsewhere${ran} and its commits are not in this repository; fetching them from the remote ${remote.name} failed:\n${r.detail}\nCheck the remote ([remote] name in incrementum.toml; git remote -v lists them), then run this again.`,
    );
  const still = await vcs.missingCommits(root, wanted);
  if (still.length > 0)
    throw new UserError(
      `job ${job.id}'s commit${still.length === 1 ? '' : 's'} ${still.map((c) => c.slice(0, 10)).join(', ')} ${still.length === 1 ? 'is' : 'are'} not in this repository, and the remote ${remote.name} does not have ${still.length === 1 ? 'it' : 'them'} either: the runner${ran} did not push them (its [remote] push is off, or its pushes failed: ii job logs ${job.id} says which).`,
    );
  return 'fetched';
}

/** Where this process fetches `job`'s refs from when it lacks them, or null (src/model/remote.ts). */
export function jobFetchRemote(config: Config, job: Job, root: string): RemoteSpec | null {
  return fetchRemote(config, databaseUrl() !== null, job.host, hostName(), hasRemoteSync(root));
}
