// The CLI's composition: the runner's real collaborators (agent, git, test
// runner) and landing's git, loaded only by the commands that run, end or
// land jobs, so a read command never loads them.
import type { JobDeps } from '../../job/launch.js';
import type { LandingVcs } from '../../vcs/landing-vcs.js';
import type { Vcs } from '../../vcs/vcs.js';
import type { AsyncStateStore } from '../../state/async-api.js';

/** The real collaborators, loaded only by the commands that run jobs. */
export async function realDeps(): Promise<JobDeps> {
  const { realJobDeps } = await import('./wiring.js');
  return realJobDeps();
}

/** Landing's git (and the workspace a landed job gives back): a GitVcs. */
export async function realLandingVcs(): Promise<LandingVcs & Vcs> {
  const { GitVcs } = await import('../../vcs/git.js');
  return new GitVcs();
}

/**
 * Ends the session of a job whose runner is gone: failed unless told done
 * (its workspace reset and freed, its todo reopened, or done), with git
 * loaded only when there is one.
 */
export function endSessionOf(
  store: AsyncStateStore,
): (sessionId: string, outcome?: 'done' | 'failed') => Promise<void> {
  return async (sessionId, outcome = 'failed') => {
    const [{ finishSession }, { GitVcs }] = await Promise.all([
      import('../../session/session.js'),
      import('../../vcs/git.js'),
    ]);
    await finishSession(store, sessionId, outcome, new GitVcs());
  };
}
