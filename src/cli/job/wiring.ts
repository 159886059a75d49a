// The real collaborators of a job: git for version control, the ACP client
// for agents, git worktrees for sessions. Loaded lazily by the commands that
// run jobs, so listing and showing never pay for the agent SDK.
import { startAgent } from '../../agent/acp-session.js';
import { autoCommit } from '../../agent/auto-commit.js';
import { resolveAgent } from '../../agent/resolve.js';
import { finishSession, startSession } from '../../session/index.js';
import { GitVcs } from '../../vcs/git.js';
import type { JobDeps } from '../../job/launch.js';

export function realJobDeps(): JobDeps {
  const vcs = new GitVcs();
  return {
    vcs,
    startAgent,
    resolveAgent: (config, override) => resolveAgent(config, override),
    startSession: (store, o) => startSession(store, o, vcs),
    finishSession: (store, sessionId, outcome) => finishSession(store, sessionId, outcome, vcs),
    afterImplement: autoCommit(vcs),
  };
}
