// A session: one todo worked on in one workspace. Start claims a workspace
// (atomically, in the store), makes it a clean checkout of the base
// revision and moves the todo to in_progress; finish moves the todo to done
// or back to open and gives the workspace back, clean, for the next session.
import { existsSync } from 'node:fs';
import { UserError } from '../errors.js';
import type { Session, Workspace } from '../model/session.js';
import { isWorkspaceBranch } from '../model/workspace-branch.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { shortId } from '../state/ids.js';
import { workspacesDir } from '../state/paths.js';
import type { Vcs } from '../vcs/vcs.js';
import { processesIn } from '../proc/cwd.js';
import { endRecordedGroups } from '../proc/recorded.js';
import { removeOverlays } from '../proc/sandbox/overlay.js';
import { checkCopies, copyInto } from './copy.js';
import { isInside, workspaceBranch, workspacePathFor } from './paths.js';
import { clearSetupRecord } from './setup-record.js';

/** What a job's session is started from (JobDeps.startSession in src/job/launch.ts). */
export interface SessionStartInput {
  /** The repository's top-level folder; without `base`, any folder in the checkout (looked up). */
  repoRoot: string;
  slug: string;
  todoId: string;
  rev?: string;
  /**
   * The base commit when the caller has just resolved it (the rev, or the
   * checked-out branch) in repoRoot, then its top-level folder: neither is
   * looked up again (a git process each, before the workspace is claimed).
   */
  base?: string;
  /** The incrementum state dir (`$XDG_STATE_HOME/incrementum`). */
  stateDir: string;
  copy?: string[];
  /**
   * The session's id, chosen by the caller: a job records it before the
   * workspace is claimed under it, so a runner killed while the workspace is
   * being made leaves the job pointing at what it claimed.
   */
  sessionId?: string;
  /** The job the session is for: its topic names it (job-subcommand spec, `ii job do`, step 4). */
  jobId?: string;
  /**
   * Told the workspace's folder as soon as it is claimed, when it is a free
   * workspace's, kept and reset in place (awaited, before the reset): what
   * reads nothing in it yet can start there meanwhile (the job's agent: its
   * process and ACP's initialize). `keptFolder` in the result says whether
   * the folder was kept after all: a reset that failed makes it again, and
   * what started in the old one must start again.
   */
  onFolder?: (path: string) => Promise<void>;
}

export interface StartedSession {
  session: Session;
  workspacePath: string;
  baseRev: string;
  workspace: Workspace;
  /** Made now (git worktree add), not a free one reset. */
  created: boolean;
  /** The folder onFolder was told of is the workspace's (false: none was told, or it was made again). */
  keptFolder: boolean;
}

export async function startSession(
  store: AsyncStateStore,
  o: SessionStartInput,
  vcs: Vcs,
): Promise<StartedSession> {
  // Everything the user can get wrong is checked before anything is claimed.
  const root = o.base !== undefined ? o.repoRoot : await vcs.root(o.repoRoot);
  const baseRev = o.base ?? (await vcs.resolveBase(root, o.rev)).sha;
  const copies = await checkCopies(root, o.copy ?? []);
  const todo = await store.todos.get(o.slug, o.todoId);
  if (!todo) throw new UserError(`no todo ${o.todoId} in this repository: ii todo list shows them.`);

  // A free workspace may still hold processes of a job whose runner died
  // (recorded, so they are ended here), or anything else working in it (a
  // shell cd'd there, a process started before its group was recorded): such
  // a workspace is passed over, never handed out.
  for (const w of await store.workspaces.list(o.slug))
    if (w.status === 'free') await endRecordedGroups(store, { workspace_path: w.path });
  const sessionId = o.sessionId ?? shortId(o.todoId);
  const { workspace, created } = await store.workspaces.acquire(
    o.slug,
    sessionId,
    (n) => workspacePathFor(o.stateDir, o.slug, n),
    workspaceBranch,
    (path) => processesIn(path).length > 0,
  );
  const path = workspace.path;
  let keptFolder = false;
  try {
    const reuse = !created && existsSync(path);
    if (reuse && o.onFolder) {
      // Before: a sandbox set up now mounts the overlays it finds (below).
      removeOverlays(o.stateDir, path);
      await o.onFolder(path);
      keptFolder = true;
    }
    if (!reuse) {
      // A directory at a path the store has just handed out is debris from an
      // earlier crash or a half-done prune: ours to clear, and only ours.
      // A free workspace whose directory was deleted leaves a stale worktree
      // registration that would block its branch: removing it prunes that.
      // Never while a process works in it (a prune kept it for that, its
      // record gone): released, it is a free workspace passed over while busy.
      const inIt = existsSync(path) ? processesIn(path) : [];
      if (inIt.length > 0)
        throw new UserError(
          `workspace ${path} was left by an earlier prune with processes working in it (pid ${inIt.join(', ')}): end them (kill ${inIt.join(' ')}), then try again.`,
        );
      if (existsSync(path) ? isInside(workspacesDir(o.stateDir, o.slug), path) : !created)
        await vcs.removeWorkspace(root, path);
      await vcs.addWorkspace(root, path, workspace.branch, baseRev);
    } else {
      try {
        await vcs.resetWorkspace(path, workspace.branch, baseRev);
      } catch {
        // Not a usable worktree any more (deleted .git file, broken admin
        // dir): make it again.
        keptFolder = false;
        await vcs.removeWorkspace(root, path);
        await vcs.addWorkspace(root, path, workspace.branch, baseRev);
      }
    }
    // git clean -x took the dependencies of the last setup with it.
    clearSetupRecord(path);
    // Nor is what the last job wrote in its dependency overlays any of this one's.
    removeOverlays(o.stateDir, path);
    copyInto(root, path, copies);
    await store.workspaces.setBaseRev(path, baseRev);
    const session = await store.sessions.create(o.slug, {
      id: sessionId,
      todo_id: todo.id,
      workspace_path: path,
      topic: o.jobId ? `job ${o.jobId}: ${todo.title}` : todo.title,
    });
    // Unless closed meanwhile: abandoning the job and closing its todo while
    // the workspace was being made leaves it closed, as after the start.
    await store.todos.setStatus(o.slug, todo.id, 'in_progress', { unlessClosed: true });
    return {
      session,
      workspacePath: path,
      baseRev,
      workspace: (await store.workspaces.list(o.slug)).find((w) => w.path === path) ?? workspace,
      created,
      keptFolder,
    };
  } catch (err) {
    await store.workspaces.release(path, sessionId);
    throw err;
  }
}

/**
 * Reopens a todo still in progress unless a job of another session than
 * `sessionId` is active on it (holds it). No claim can come between the
 * look and the write: a todo is claimed only while it is open.
 */
export async function reopenUnheld(
  store: AsyncStateStore,
  repo: string,
  todoId: string,
  sessionId: string | null,
): Promise<void> {
  if ((await store.todos.get(repo, todoId))?.status !== 'in_progress') return;
  const active = await store.jobs.list(repo, { activeOnly: true });
  if (active.some((j) => j.todo_id === todoId && j.status === 'active' && j.session_id !== sessionId)) return;
  // A close may come between the look and the write (abandon and close, as
  // the job fails on its own): it stays.
  await store.todos.setStatus(repo, todoId, 'open', { unlessClosed: true });
}

/**
 * Ends a session: 'done' marks the todo done, 'failed' reopens it; both
 * release the workspace, reset to clean (the change's commits stay under
 * refs/incrementum). Safe to call twice: a workspace another session has
 * claimed since is never touched.
 */
export async function finishSession(
  store: AsyncStateStore,
  sessionId: string,
  outcome: 'done' | 'failed',
  vcs: Vcs,
): Promise<Session> {
  const session = await store.sessions.get(sessionId);
  if (!session) throw new UserError(`no session ${sessionId}`);
  const finished = await store.sessions.setStatus(sessionId, outcome);
  // A failed session reopens its todo only while it is still in progress: a
  // todo another job has finished (or someone closed) meanwhile stays so, and
  // so does one another job holds (the cleanup of a dead runner reopens its
  // todo before it ends the session, and a new job may have claimed it since).
  const todo = await store.todos.get(session.repo, session.todo_id);
  if (outcome === 'done' && todo) await store.todos.setStatus(session.repo, session.todo_id, 'done');
  else if (outcome === 'failed') await reopenUnheld(store, session.repo, session.todo_id, sessionId);
  const ws = (await store.workspaces.list(session.repo)).find(
    (w) => w.path === session.workspace_path && w.session_id === sessionId,
  );
  if (ws) {
    vcs.release(ws.path);
    // Reset only a workspace of this machine's: under its workspaces folder,
    // on a workspace branch. In a shared store the record may be another
    // machine's (whose path can name another folder here) or written by a
    // machine taken over: a path naming the user's own linked worktree, a
    // branch naming theirs, and the reset below would wipe that worktree's
    // work and move their branch (found by ii job list reaping a job the
    // record says ran here).
    const ours = isInside(workspacesDir(store.dir, session.repo), ws.path) && isWorkspaceBranch(ws.branch);
    try {
      if (ours && ws.base_rev && existsSync(ws.path))
        await vcs.resetWorkspace(ws.path, ws.branch, ws.base_rev);
    } catch {
      // The next session to claim it resets (or re-creates) it anyway.
    }
    // Only while this session still holds it: a second finishSession of the
    // same session running at once (an abandon and a prune) may have
    // released it during the reset, and a new job claimed it.
    await store.workspaces.release(ws.path, sessionId);
  }
  return finished;
}
