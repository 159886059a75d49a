// What `ii workspace list` shows and what `ii workspace prune` removes. Prune
// works only under the repo's workspaces dir in the state dir, so the user's
// own checkout is out of its reach, and of refs/incrementum it deletes only
// the refs of changes no job records: every recorded iteration commit stays.
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { SessionStatus, Workspace } from '../model/session.js';
import { isWorkspaceBranch } from '../model/workspace-branch.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { workspacesDir } from '../state/paths.js';
import { git } from '../vcs/git-run.js';
import type { Vcs } from '../vcs/vcs.js';
import { pidAlive } from '../proc/alive.js';
import { processesIn } from '../proc/cwd.js';
import { hostName } from '../proc/host.js';
import { endRecordedGroups } from '../proc/recorded.js';
import { removeOrphanOverlays, removeOverlays } from '../proc/sandbox/overlay.js';
import { diskUsage } from './disk-usage.js';
import { isInside } from './paths.js';
import { finishSession } from './session.js';

export interface WorkspaceInfo extends Workspace {
  /** False when the directory is gone (prune drops the record). */
  exists: boolean;
  todo_id: string | null;
  session_status: SessionStatus | null;
}

export async function listWorkspaces(store: AsyncStateStore, slug: string): Promise<WorkspaceInfo[]> {
  const out: WorkspaceInfo[] = [];
  for (const w of await store.workspaces.list(slug)) {
    const s = w.session_id ? await store.sessions.get(w.session_id) : null;
    out.push({
      ...w,
      exists: existsSync(w.path),
      todo_id: s?.todo_id ?? null,
      session_status: s?.status ?? null,
    });
  }
  return out;
}

/**
 * The workspaces jobs of the repository used that are gone now: how many, and
 * how many of them went as their job landed (the rest ii workspace prune took).
 */
export async function removedWorkspaces(
  store: AsyncStateStore,
  slug: string,
): Promise<{ removed: number; landed: number }> {
  const now = new Set((await store.workspaces.list(slug)).map((w) => w.path));
  const gone = new Set(
    (await store.sessions.list(slug)).flatMap((s) => (now.has(s.workspace_path) ? [] : [s.workspace_path])),
  );
  const landed = new Set(
    (await store.jobs.list(slug)).flatMap((j) =>
      j.landed && j.workspace_path && gone.has(j.workspace_path) ? [j.workspace_path] : [],
    ),
  );
  return { removed: gone.size, landed: landed.size };
}

export interface Pruned {
  path: string;
  reason: 'free' | 'finished session' | 'missing directory' | 'no record';
  /** Disk its removal freed (diskUsage: hard links shared with the checkout not counted). */
  bytes: number;
}

export interface PruneTarget {
  root: string;
  slug: string;
  stateDir: string;
}

/** A workspace prune left where it was: processes still work in it. */
export interface KeptWorkspace {
  path: string;
  /** The processes whose current or root directory is inside it. */
  pids: number[];
}

export interface PruneResult {
  removed: Pruned[];
  kept: KeptWorkspace[];
}

/**
 * Removes free workspaces, workspaces still claimed by a session that has
 * ended, records whose directory is gone and directories with no record.
 * Workspaces of active sessions stay, and so does any workspace a process
 * still works in (its cwd or root inside it): deleting the folder under a
 * live process leaves it running in a deleted directory, out of every
 * check's sight; the workspace goes once it has ended.
 */
export async function pruneWorkspaces(
  store: AsyncStateStore,
  t: PruneTarget,
  vcs: Vcs,
): Promise<PruneResult> {
  const dir = workspacesDir(t.stateDir, t.slug);
  const mine = (path: string) => isInside(dir, path) && resolve(path) !== resolve(t.root);
  const pruned: Pruned[] = [];
  // The directories are read before the records: a job that claims a new
  // workspace while this runs has its record written before git makes its
  // directory, so a directory seen here with no record below is no job's.
  // (Read after, it could be one made since, removed under its job.)
  const names = existsSync(dir) ? readdirSync(dir) : [];
  const kept: KeptWorkspace[] = [];
  /** Whether processes work in `path` (then it is kept, saying which). */
  const busy = (path: string): boolean => {
    const pids = existsSync(path) ? processesIn(path) : [];
    if (pids.length > 0) kept.push({ path, pids });
    return pids.length > 0;
  };
  const known = new Set<string>();
  let ended: Promise<Map<string, 'done' | 'failed'>> | null = null;
  const endings = () => (ended ??= strandedSessions(store, t.slug));
  for (const listed of await store.workspaces.list(t.slug)) {
    known.add(resolve(listed.path));
    // Another machine's workspace (a shared store lists every machine's
    // under the repository): its record is its machine's to prune, whose
    // folder it names; dropped from here, that machine lost the workspace
    // (made again, set up again) and found its folder debris.
    if (!mine(listed.path)) continue;
    // Read again: removing the ones before it took a while, and a session
    // may have claimed it meanwhile.
    let w = (await store.workspaces.list(t.slug)).find((x) => x.path === listed.path);
    if (!w) continue;
    let session = w.session_id ? await store.sessions.get(w.session_id) : null;
    // A session its job's runner was killed before ending (ii run killed in
    // the middle of cleaning up after a dead runner: the job ended, its
    // session not yet): ended here as the runner would have, then pruned.
    const stranded =
      w.status !== 'free' && session?.status === 'active' ? (await endings()).get(session.id) : undefined;
    if (session && stranded) {
      // Its processes first, as that cleanup does: the session's end resets the folder.
      await endRecordedGroups(store, { workspace_path: w.path });
      if (busy(w.path)) continue;
      session = await finishSession(store, session.id, stranded, vcs);
      w = (await store.workspaces.list(t.slug)).find((x) => x.path === listed.path);
      if (!w) continue;
    }
    if (w.status !== 'free' && !(session && session.status !== 'active')) continue;
    // What a dead runner left running there goes before its directory does
    // (as a session's start does for free workspaces); anything else
    // working there keeps it, record and all (a record gone would let its
    // path be handed out again and cleared as debris).
    await endRecordedGroups(store, { workspace_path: w.path });
    if (busy(w.path)) continue;
    let reason: Pruned['reason'];
    if (w.status === 'free') {
      // Delete the record first, and only while it is still free: a session
      // starting right now either got it before (we skip it) or cannot get it.
      if (!(await store.workspaces.removeIfFree(w.path))) continue;
      reason = stranded ? 'finished session' : existsSync(w.path) ? 'free' : 'missing directory';
    } else {
      // Only while that session still holds it: since the list was read, it
      // may have been released and claimed by a job starting now.
      if (!session || !(await store.workspaces.remove(w.path, session.id))) continue;
      reason = 'finished session';
    }
    let bytes = 0;
    if (mine(w.path)) {
      // Looked at again now that no one can claim it: a process that came
      // in meanwhile keeps the folder (a directory with no record, which
      // the next prune looks at again).
      if (busy(w.path)) continue;
      bytes = diskUsage(w.path);
      await vcs.removeWorkspace(t.root, w.path);
    }
    removeOverlays(t.stateDir, w.path);
    await deleteBranch(t.root, w.branch);
    pruned.push({ path: w.path, reason, bytes });
  }
  for (const name of names) {
    const path = join(dir, name);
    if (known.has(resolve(path)) || !mine(path) || !existsSync(path)) continue;
    if (busy(path)) continue;
    const bytes = diskUsage(path);
    await vcs.removeWorkspace(t.root, path);
    removeOverlays(t.stateDir, path);
    pruned.push({ path, reason: 'no record', bytes });
  }
  // A workspace's upper layers go with it; those of one removed otherwise (by hand) go now.
  removeOrphanOverlays(t.stateDir, t.slug);
  return { removed: pruned, kept };
}

/**
 * The sessions whose jobs have all ended, each run by a runner of this
 * machine that is gone, with the end the runner would have given the
 * session: done for a completed job (its todo done), failed otherwise (its
 * todo reopened). Such a session is still active only when the runner, or
 * whoever cleaned up after it, was killed between the job's end and the
 * session's. A runner still alive may be ending it itself: not one of these.
 */
async function strandedSessions(
  store: AsyncStateStore,
  slug: string,
): Promise<Map<string, 'done' | 'failed'>> {
  const bySession = new Map<string, { status: string; gone: boolean }[]>();
  const host = hostName();
  for (const j of await store.jobs.list(slug)) {
    if (!j.session_id) continue;
    const gone = j.host === host && (j.pid == null || !pidAlive(j.pid));
    bySession.set(j.session_id, [...(bySession.get(j.session_id) ?? []), { status: j.status, gone }]);
  }
  const out = new Map<string, 'done' | 'failed'>();
  for (const [id, jobs] of bySession)
    if (jobs.every((j) => j.status !== 'active' && j.gone))
      out.set(id, jobs.some((j) => j.status === 'completed') ? 'done' : 'failed');
  return out;
}

/**
 * Deletes the refs of changes no job records (refs/incrementum/changes/<id>/…):
 * an older runner reserved the next change's id and base after each job's
 * last commit, and a job could fail before it recorded its first. The refs
 * of every recorded change stay, with all their iterations.
 */
export function pruneChangeRefs(store: AsyncStateStore, root: string, vcs: Vcs): Promise<string[]> {
  return vcs.pruneChangeRefs(root, () => store.jobs.recordedChangeIds());
}

/** A workspace branch of ours, unless a worktree still has it checked out (git refuses then). */
async function deleteBranch(root: string, branch: string): Promise<void> {
  if (!isWorkspaceBranch(branch)) return;
  await git(root, ['branch', '-q', '-D', branch]).catch(() => {});
}
