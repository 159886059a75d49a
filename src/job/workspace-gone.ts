// A job whose workspace directory vanished under it (removed by something
// else while the job ran in it) sees it as a spawn error, "spawn git ENOENT",
// which reads as "git is not installed". This says what really happened.
import { existsSync } from 'node:fs';
import { isInside } from '../session/paths.js';
import { GoneCwdError } from '../vcs/git-run.js';

/**
 * The failure reason when `err` came from the job's workspace being gone:
 * an ENOENT while `workspace` no longer exists, or a GoneCwdError in it or
 * (before the job knows its workspace) anywhere under `workspacesDir`.
 * Null for any other error.
 */
export function workspaceGoneReason(
  err: unknown,
  o: { workspace?: string; workspacesDir?: string },
): string | null {
  if (!(err instanceof Error) || (err as NodeJS.ErrnoException).code !== 'ENOENT') return null;
  const gone = err instanceof GoneCwdError ? err.cwd : o.workspace;
  if (!gone || existsSync(gone)) return null;
  const ws = o.workspace ?? (o.workspacesDir && isInside(o.workspacesDir, gone) ? gone : undefined);
  if (!ws || (gone !== ws && !isInside(ws, gone)) || existsSync(ws)) return null;
  return `the workspace ${ws} was removed while the job was using it (${err instanceof GoneCwdError ? err.detail : err.message})`;
}
