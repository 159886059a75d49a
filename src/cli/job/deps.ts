// The runner's real collaborators (agent, git, test runner), loaded only by the
// commands that run or end jobs, so a read command never loads them.
import type { JobDeps } from '../../job/launch.js';

/** The real collaborators, loaded only by the commands that run jobs. */
export async function realDeps(): Promise<JobDeps> {
  const { realJobDeps } = await import('../../job/wiring.js');
  return realJobDeps();
}
