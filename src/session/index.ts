export { finishSession, startSession } from './session.js';
export type { SessionStartInput, StartedSession } from './session.js';
export { isInside, workspaceBranch, workspacePathFor } from './paths.js';
export { listWorkspaces, pruneWorkspaces } from './workspaces.js';
export type { Pruned, PruneTarget, WorkspaceInfo } from './workspaces.js';
