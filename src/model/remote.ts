// When job commits travel through a git remote (issue 31, "git across
// machines"): with a shared store, a job's commits would otherwise live only
// in the worktree of the machine that ran it. [remote] push decides; unset,
// it follows the store: on with PostgreSQL (runners on several machines),
// off with the local SQLite file, so one machine's use is as it was. The
// default is on only where the repository has that remote: a clone with none
// (the README's "neither remote nor project") works on PostgreSQL as on
// SQLite, and an explicit push = true without it is refused at start rather
// than failing every push and every landing.
import { UserError } from '../errors.js';
import type { Config } from './config.js';

/** The remote a push or fetch goes to, and how long it may take. */
export interface RemoteSpec {
  /** A remote's name in the repository (`git remote`), never a URL typed here. */
  name: string;
  /** A push or fetch running longer is ended (its process group with it). */
  timeoutMs: number;
}

const spec = (config: Config): RemoteSpec => ({
  name: config.remote.name,
  timeoutMs: config.remote['timeout-seconds'] * 1000,
});

/** Whether the repository has a remote of this name configured (src/vcs/remote-config.ts: hasRemoteSync). */
export type HasRemote = (name: string) => boolean;

function chosen(
  config: Config,
  explicit: boolean | undefined,
  setting: string,
  sharedStore: boolean,
  hasRemote: HasRemote,
): RemoteSpec | null {
  const name = config.remote.name;
  if (explicit === false) return null;
  if (explicit === undefined) return sharedStore && hasRemote(name) ? spec(config) : null;
  if (!hasRemote(name))
    throw new UserError(
      `${setting} = true, but this repository has no remote named ${name} (git remote -v lists its remotes). ` +
        `Add it (git remote add ${name} <url>), name another with [remote] name, or set ${setting} = false.`,
    );
  return spec(config);
}

/**
 * Where runners push job refs (and diffs and landings fetch them from), or
 * null: `sharedStore` is whether the store is PostgreSQL (the default's
 * reason, when the repository has the remote); an explicit [remote] push
 * wins, and throws a UserError when there is no such remote.
 */
export function jobRefsRemote(config: Config, sharedStore: boolean, hasRemote: HasRemote): RemoteSpec | null {
  return chosen(config, config.remote.push, '[remote] push', sharedStore, hasRemote);
}

/** Where a landing pushes its target branch (with a lease), or null: [land] push, else as jobRefsRemote. */
export function landingRemote(config: Config, sharedStore: boolean, hasRemote: HasRemote): RemoteSpec | null {
  const setting = config.land.push !== undefined ? '[land] push' : '[remote] push';
  return chosen(config, config.land.push ?? config.remote.push, setting, sharedStore, hasRemote);
}

/** The remote to fetch a job's refs from when a diff or landing lacks them, or null (a local job, nothing shared). */
export function fetchRemote(
  config: Config,
  sharedStore: boolean,
  jobHost: string | null,
  thisHost: string,
  hasRemote: HasRemote,
): RemoteSpec | null {
  // A job run on another machine can only be read through the remote, whatever this machine pushes,
  // if this clone has that remote: without it there is nothing to fetch from (the diff is unavailable, as before).
  if (jobHost && jobHost !== thisHost && config.remote.push !== false && hasRemote(config.remote.name))
    return spec(config);
  return jobRefsRemote(config, sharedStore, hasRemote);
}
