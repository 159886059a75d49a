// When job commits travel through a git remote (issue 31, "git across
// machines"): with a shared store, a job's commits would otherwise live only
// in the worktree of the machine that ran it. [remote] push decides; unset,
// it follows the store: on with PostgreSQL (runners on several machines),
// off with the local SQLite file, so one machine's use is as it was.
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

/**
 * Where runners push job refs (and diffs and landings fetch them from), or
 * null: `sharedStore` is whether the store is PostgreSQL (the default's
 * reason); an explicit [remote] push wins.
 */
export function jobRefsRemote(config: Config, sharedStore: boolean): RemoteSpec | null {
  return (config.remote.push ?? sharedStore) ? spec(config) : null;
}

/** Where a landing pushes its target branch (with a lease), or null: [land] push, else as jobRefsRemote. */
export function landingRemote(config: Config, sharedStore: boolean): RemoteSpec | null {
  return (config.land.push ?? config.remote.push ?? sharedStore) ? spec(config) : null;
}

/** The remote to fetch a job's refs from when a diff or landing lacks them, or null (a local job, nothing shared). */
export function fetchRemote(
  config: Config,
  sharedStore: boolean,
  jobHost: string | null,
  thisHost: string,
): RemoteSpec | null {
  // A job run on another machine can only be read through the remote, whatever this machine pushes.
  if (jobHost && jobHost !== thisHost && config.remote.push !== false) return spec(config);
  return jobRefsRemote(config, sharedStore);
}
