export { finishSession, startSession, workspaceBranch, workspacePathFor } from './session.js';
export type { SessionStartInput, StartedSession } from './session.js';
