export { finishSession, reopenUnheld, startSession } from './session.js';
export type { SessionStartInput, StartedSession } from './session.js';
export type { Pruned, PruneTarget, WorkspaceInfo } from './workspaces.js';
