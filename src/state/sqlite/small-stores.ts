// Control requests, sessions and workspaces: small tables with small stores.
import type { DatabaseSync } from 'node:sqlite';
import { UserError } from '../../errors.js';
import type { ControlKind, ControlRequest } from '../../model/job.js';
import type {
  ProcessGroup,
  Session,
  SessionStatus,
  Workspace,
  WorkspaceStatus,
} from '../../model/session.js';
import type { BacklogRunnerRecord } from '../../model/backlog-runner.js';
import type { ControlStore, ProcessGroupStore, RunnerStore, SessionStore, WorkspaceStore } from '../api.js';
import { nowIso, shortId } from '../ids.js';
import { transaction } from './db.js';

export function sqliteControlStore(db: DatabaseSync): ControlStore {
  const byId = db.prepare('SELECT * FROM control_requests WHERE id = ?');
  return {
    request: (job_id, kind: ControlKind, reason = '') =>
      transaction(db, () => {
        const r = db
          .prepare('INSERT INTO control_requests (job_id, kind, reason, created_at) VALUES (?,?,?,?)')
          .run(job_id, kind, reason, nowIso());
        return byId.get(r.lastInsertRowid) as unknown as ControlRequest;
      }),
    pending: (job_id) =>
      db
        .prepare('SELECT * FROM control_requests WHERE job_id = ? AND handled_at IS NULL ORDER BY id')
        .all(job_id) as unknown as ControlRequest[],
    markHandled(id) {
      transaction(db, () =>
        db.prepare('UPDATE control_requests SET handled_at = ? WHERE id = ?').run(nowIso(), id),
      );
    },
  };
}

export function sqliteSessionStore(db: DatabaseSync): SessionStore {
  const byId = db.prepare('SELECT * FROM sessions WHERE id = ?');
  const get = (id: string) => (byId.get(id) as unknown as Session | undefined) ?? null;
  return {
    create: (repo, input) =>
      transaction(db, () => {
        if (input.id && byId.get(input.id)) throw new Error(`session ${input.id} already exists`);
        let id = input.id ?? shortId(input.todo_id);
        while (byId.get(id)) id = shortId(input.todo_id);
        const now = nowIso();
        db.prepare(
          'INSERT INTO sessions (id, repo, todo_id, workspace_path, topic, status, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)',
        ).run(id, repo, input.todo_id, input.workspace_path, input.topic ?? '', 'active', now, now);
        return get(id) as Session;
      }),
    get,
    setStatus: (id, status: SessionStatus) =>
      transaction(db, () => {
        const res = db
          .prepare('UPDATE sessions SET status = ?, updated_at = ? WHERE id = ?')
          .run(status, nowIso(), id);
        if (res.changes === 0) throw new UserError(`no session ${id}`);
        return get(id) as Session;
      }),
    list: (repo) =>
      db
        .prepare('SELECT * FROM sessions WHERE repo = ? ORDER BY created_at DESC')
        .all(repo) as unknown as Session[],
  };
}

export interface WorkspaceRow {
  path: string;
  repo: string;
  n: number;
  branch: string;
  base_rev: string | null;
  status: string;
  session_id: string | null;
  created_at: string;
  updated_at: string;
}
export const toWorkspace = (r: WorkspaceRow): Workspace => ({
  path: r.path,
  repo: r.repo,
  branch: r.branch,
  base_rev: r.base_rev,
  status: r.status as WorkspaceStatus,
  session_id: r.session_id,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/**
 * A workspace's record leaves the listing but its row stays, as 'removed',
 * so its number is never handed out again (acquire takes the highest plus
 * one). Only the repo's highest row is needed for that: older removed rows go.
 */
function markRemoved(db: DatabaseSync, path: string, condition: string, ...params: string[]): boolean {
  const row = db.prepare('SELECT repo FROM workspaces WHERE path = ?').get(path) as
    { repo: string } | undefined;
  const changed =
    db
      .prepare(
        `UPDATE workspaces SET status = 'removed', session_id = NULL, updated_at = ? WHERE path = ? AND status != 'removed' ${condition}`,
      )
      .run(nowIso(), path, ...params).changes > 0;
  if (changed && row)
    db.prepare(
      "DELETE FROM workspaces WHERE repo = ? AND status = 'removed' AND n < (SELECT MAX(n) FROM workspaces WHERE repo = ?)",
    ).run(row.repo, row.repo);
  return changed;
}

export function sqliteWorkspaceStore(db: DatabaseSync): WorkspaceStore {
  const byPath = db.prepare('SELECT * FROM workspaces WHERE path = ?');
  return {
    acquire: (repo, session_id, pathFor, branchFor, busy) =>
      // BEGIN IMMEDIATE serialises claimants across processes: the row is
      // claimed (or a new n reserved) before anyone else can look.
      transaction(db, () => {
        const now = nowIso();
        const free = (
          db
            .prepare("SELECT * FROM workspaces WHERE repo = ? AND status = 'free' ORDER BY n")
            .all(repo) as unknown as WorkspaceRow[]
        )
          // Only one at the path this caller would give its number: in a shared
          // store, other machines' (and other clones') workspaces are theirs.
          .find((w) => w.path === pathFor(w.n) && !busy?.(w.path));
        if (free) {
          // The branch by today's naming: a workspace made by an earlier
          // version moves to it when it is next claimed (resetWorkspace).
          db.prepare(
            "UPDATE workspaces SET status = 'acquired', session_id = ?, branch = ?, updated_at = ? WHERE path = ?",
          ).run(session_id, branchFor(free.n), now, free.path);
          return { workspace: toWorkspace(byPath.get(free.path) as unknown as WorkspaceRow), created: false };
        }
        // The highest number ever handed out, removed ones included (their
        // rows stay as 'removed'): a number is never handed out twice, so a
        // new workspace never gets the path or branch of one whose removal
        // (a landing's, a prune's) may still be under way.
        const { n } = db
          .prepare('SELECT COALESCE(MAX(n), 0) + 1 AS n FROM workspaces WHERE repo = ?')
          .get(repo) as { n: number };
        const path = pathFor(n);
        db.prepare("DELETE FROM workspaces WHERE path = ? AND status = 'removed'").run(path);
        db.prepare(
          "INSERT INTO workspaces (path, repo, n, branch, base_rev, status, session_id, created_at, updated_at) VALUES (?,?,?,?,NULL,'acquired',?,?,?)",
        ).run(path, repo, n, branchFor(n), session_id, now, now);
        return { workspace: toWorkspace(byPath.get(path) as unknown as WorkspaceRow), created: true };
      }),
    setBaseRev(path, base_rev) {
      transaction(db, () =>
        db
          .prepare(
            "UPDATE workspaces SET base_rev = ?, updated_at = ? WHERE path = ? AND status != 'removed'",
          )
          .run(base_rev, nowIso(), path),
      );
    },
    release(path, session_id) {
      // Never a removed one: it would be handed out while its directory goes.
      const held = session_id === undefined ? '' : 'AND session_id = ?';
      transaction(db, () =>
        db
          .prepare(
            `UPDATE workspaces SET status = 'free', session_id = NULL, updated_at = ? WHERE path = ? AND status != 'removed' ${held}`,
          )
          .run(nowIso(), path, ...(session_id === undefined ? [] : [session_id])),
      );
    },
    remove: (path, session_id) =>
      transaction(db, () =>
        session_id === undefined
          ? markRemoved(db, path, '')
          : markRemoved(db, path, 'AND session_id = ?', session_id),
      ),
    removeIfFree: (path) => transaction(db, () => markRemoved(db, path, "AND status = 'free'")),
    list: (repo) =>
      (repo
        ? (db
            .prepare("SELECT * FROM workspaces WHERE repo = ? AND status != 'removed' ORDER BY n")
            .all(repo) as unknown as WorkspaceRow[])
        : (db
            .prepare("SELECT * FROM workspaces WHERE status != 'removed' ORDER BY repo, n")
            .all() as unknown as WorkspaceRow[])
      ).map(toWorkspace),
  };
}

export function sqliteProcessGroupStore(db: DatabaseSync): ProcessGroupStore {
  return {
    record: (g) =>
      transaction(db, () => {
        const r = db
          .prepare(
            'INSERT INTO process_groups (job_id, workspace_path, pgid, start_ticks, host, label, started_at) VALUES (?,?,?,?,?,?,?)',
          )
          .run(g.job_id, g.workspace_path, g.pgid, g.start_ticks, g.host, g.label, nowIso());
        return db
          .prepare('SELECT * FROM process_groups WHERE id = ?')
          .get(r.lastInsertRowid) as unknown as ProcessGroup;
      }),
    forget(id) {
      transaction(db, () => db.prepare('DELETE FROM process_groups WHERE id = ?').run(id));
    },
    list: (filter) =>
      ('job_id' in filter
        ? db.prepare('SELECT * FROM process_groups WHERE job_id = ? ORDER BY id').all(filter.job_id)
        : db
            .prepare('SELECT * FROM process_groups WHERE workspace_path = ? ORDER BY id')
            .all(filter.workspace_path)) as unknown as ProcessGroup[],
  };
}

export interface RunnerRow extends Omit<BacklogRunnerRecord, 'watch' | 'starting' | 'lands'> {
  watch: number;
  starting: string;
  lands: number;
}

export const toRunner = (r: RunnerRow): BacklogRunnerRecord => ({
  ...r,
  watch: r.watch === 1,
  starting: parseIds(r.starting),
  lands: r.lands === 1,
});

/** A JSON array of ids; anything else (a hand-edited row) reads as none. */
function parseIds(text: string): string[] {
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function sqliteRunnerStore(db: DatabaseSync): RunnerStore {
  const byId = db.prepare('SELECT * FROM runners WHERE id = ?');
  const get = (id: number) => {
    const r = byId.get(id) as unknown as RunnerRow | undefined;
    return r ? toRunner({ ...r }) : null;
  };
  const todoStatus = db.prepare('SELECT status FROM todos WHERE repo = ? AND id = ?');
  /** takeStart's second check: the todo is no longer open (a job claimed it since the caller looked). */
  const claimedSince = (repo: string, todoId: string) => {
    const t = todoStatus.get(repo, todoId) as { status: string } | undefined;
    return t !== undefined && t.status !== 'open';
  };
  return {
    register: (input) =>
      transaction(db, () => {
        const now = nowIso();
        const r = db
          .prepare(
            'INSERT INTO runners (repo, pid, host, slots, watch, lands, started_at, heartbeat_at) VALUES (?,?,?,?,?,?,?,?)',
          )
          .run(
            input.repo,
            input.pid,
            input.host,
            Math.max(1, input.slots),
            input.watch ? 1 : 0,
            input.lands ? 1 : 0,
            now,
            now,
          );
        return get(Number(r.lastInsertRowid))!;
      }),
    get,
    list: (repo) =>
      (
        db.prepare('SELECT * FROM runners WHERE repo = ? ORDER BY id').all(repo) as unknown as RunnerRow[]
      ).map((r) => toRunner({ ...r })),
    setSlots: (id, slots) =>
      transaction(db, () => {
        const res = db.prepare('UPDATE runners SET slots = ? WHERE id = ?').run(Math.max(1, slots), id);
        if (res.changes === 0) throw new UserError(`the backlog runner ${id} is not running any more`);
        return get(id)!;
      }),
    takeStart: (id, todoId, takenElsewhere) =>
      transaction(db, () => {
        const me = get(id);
        if (!me) return false;
        const others = (
          db
            .prepare('SELECT * FROM runners WHERE repo = ? AND id != ? ORDER BY id')
            .all(me.repo, id) as unknown as RunnerRow[]
        ).map((r) => toRunner({ ...r }));
        if (takenElsewhere(others)) return false;
        if (claimedSince(me.repo, todoId)) return false;
        if (!me.starting.includes(todoId))
          db.prepare('UPDATE runners SET starting = ? WHERE id = ?').run(
            JSON.stringify([...me.starting, todoId]),
            id,
          );
        return true;
      }),
    setStarting(id, todoIds) {
      transaction(db, () =>
        db.prepare('UPDATE runners SET starting = ? WHERE id = ?').run(JSON.stringify(todoIds), id),
      );
    },
    heartbeat(id) {
      transaction(db, () => db.prepare('UPDATE runners SET heartbeat_at = ? WHERE id = ?').run(nowIso(), id));
    },
    remove(id) {
      transaction(db, () => db.prepare('DELETE FROM runners WHERE id = ?').run(id));
    },
  };
}
