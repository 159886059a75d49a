// Control requests, sessions, workspaces, process groups and backlog runners
// on PostgreSQL: sqlite/small-stores.ts's rules. A workspace is claimed with
// FOR UPDATE SKIP LOCKED (two acquirers take two free ones, or one takes it
// and the other makes a new one); a new number is reserved under the repo's
// advisory lock; a runner's takeStart locks the repo's runner rows, so two
// runners never both note the same todo.
import { UserError } from '../../errors.js';
import type { ControlRequest } from '../../model/job.js';
import type { ProcessGroup, Session, Workspace } from '../../model/session.js';
import type {
  AsyncControlStore,
  AsyncProcessGroupStore,
  AsyncRunnerStore,
  AsyncSessionStore,
  AsyncWorkspaceStore,
} from '../async-api.js';
import { nowIso, shortId } from '../ids.js';
import { toRunner, toWorkspace, type RunnerRow, type WorkspaceRow } from '../sqlite/small-stores.js';
import type { PgDb, Q, Tx } from './db.js';

export function pgControlStore(db: PgDb): AsyncControlStore {
  return {
    request: (job_id, kind, reason = '') =>
      db.tx(
        async (t) =>
          (await t.one<ControlRequest>(
            'INSERT INTO control_requests (job_id, kind, reason, created_at) VALUES ($1,$2,$3,$4) RETURNING *',
            [job_id, kind, reason, nowIso()],
          ))!,
      ),
    pending: (job_id) =>
      db.q<ControlRequest>(
        'SELECT * FROM control_requests WHERE job_id = $1 AND handled_at IS NULL ORDER BY id',
        [job_id],
      ),
    markHandled: (id) =>
      db.tx(async (t) => {
        await t.q('UPDATE control_requests SET handled_at = $1 WHERE id = $2', [nowIso(), id]);
      }),
  };
}

export function pgSessionStore(db: PgDb): AsyncSessionStore {
  const get = async (e: Q, id: string) =>
    (await e.one<Session>('SELECT * FROM sessions WHERE id = $1', [id])) ?? null;
  return {
    create: (repo, input) =>
      db.tx(async (t) => {
        if (input.id && (await get(t, input.id))) throw new Error(`session ${input.id} already exists`);
        let id = input.id ?? shortId(input.todo_id);
        while (await get(t, id)) id = shortId(input.todo_id);
        const now = nowIso();
        return (await t.one<Session>(
          'INSERT INTO sessions (id, repo, todo_id, workspace_path, topic, status, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8) RETURNING *',
          [id, repo, input.todo_id, input.workspace_path, input.topic ?? '', 'active', now, now],
        ))!;
      }),
    get: (id) => get(db, id),
    setStatus: (id, status) =>
      db.tx(async (t) => {
        const s = await t.one<Session>(
          'UPDATE sessions SET status = $1, updated_at = $2 WHERE id = $3 RETURNING *',
          [status, nowIso(), id],
        );
        if (!s) throw new UserError(`no session ${id}`);
        return s;
      }),
    list: (repo) => db.q<Session>('SELECT * FROM sessions WHERE repo = $1 ORDER BY created_at DESC', [repo]),
  };
}

/** sqlite/small-stores.ts markRemoved: the row stays, as 'removed', so its number is never handed out again. */
async function markRemoved(t: Tx, path: string, condition: string, ...params: string[]): Promise<boolean> {
  const row = await t.one<{ repo: string }>('SELECT repo FROM workspaces WHERE path = $1', [path]);
  const changed =
    (
      await t.q(
        `UPDATE workspaces SET status = 'removed', session_id = NULL, updated_at = $1 WHERE path = $2 AND status != 'removed' ${condition} RETURNING path`,
        [nowIso(), path, ...params],
      )
    ).length > 0;
  if (changed && row)
    await t.q(
      "DELETE FROM workspaces WHERE repo = $1 AND status = 'removed' AND n < (SELECT MAX(n) FROM workspaces WHERE repo = $1)",
      [row.repo],
    );
  return changed;
}

export function pgWorkspaceStore(db: PgDb): AsyncWorkspaceStore {
  const byPath = async (t: Q, path: string): Promise<Workspace> =>
    toWorkspace((await t.one<WorkspaceRow>('SELECT * FROM workspaces WHERE path = $1', [path]))!);
  return {
    acquire: (repo, session_id, pathFor, branchFor, busy) =>
      db.tx(async (t) => {
        const now = nowIso();
        // Free ones another acquirer holds are skipped, not waited for.
        const free = (
          await t.q<WorkspaceRow>(
            "SELECT * FROM workspaces WHERE repo = $1 AND status = 'free' ORDER BY n FOR UPDATE SKIP LOCKED",
            [repo],
          )
        )
          // Only one at the path this caller would give its number: in a shared
          // store, other machines' (and other clones') workspaces are theirs.
          .find((w) => w.path === pathFor(w.n) && !busy?.(w.path));
        if (free) {
          await t.q(
            "UPDATE workspaces SET status = 'acquired', session_id = $1, updated_at = $2 WHERE path = $3",
            [session_id, now, free.path],
          );
          return { workspace: await byPath(t, free.path), created: false };
        }
        // A new number: the highest ever handed out plus one, under the repo's lock.
        await t.q("SELECT pg_advisory_xact_lock(hashtext('ii.workspaces:' || $1))", [repo]);
        const { n } = (await t.one<{ n: number }>(
          'SELECT COALESCE(MAX(n), 0) + 1 AS n FROM workspaces WHERE repo = $1',
          [repo],
        ))!;
        const path = pathFor(n);
        await t.q("DELETE FROM workspaces WHERE path = $1 AND status = 'removed'", [path]);
        await t.q(
          "INSERT INTO workspaces (path, repo, n, branch, base_rev, status, session_id, created_at, updated_at) VALUES ($1,$2,$3,$4,NULL,'acquired',$5,$6,$7)",
          [path, repo, n, branchFor(n), session_id, now, now],
        );
        return { workspace: await byPath(t, path), created: true };
      }),
    setBaseRev: (path, base_rev) =>
      db.tx(async (t) => {
        await t.q(
          "UPDATE workspaces SET base_rev = $1, updated_at = $2 WHERE path = $3 AND status != 'removed'",
          [base_rev, nowIso(), path],
        );
      }),
    release: (path, session_id) =>
      db.tx(async (t) => {
        const held = session_id === undefined ? '' : 'AND session_id = $3';
        await t.q(
          `UPDATE workspaces SET status = 'free', session_id = NULL, updated_at = $1 WHERE path = $2 AND status != 'removed' ${held}`,
          [nowIso(), path, ...(session_id === undefined ? [] : [session_id])],
        );
      }),
    remove: (path, session_id) =>
      db.tx((t) =>
        session_id === undefined
          ? markRemoved(t, path, '')
          : markRemoved(t, path, 'AND session_id = $3', session_id),
      ),
    removeIfFree: (path) => db.tx((t) => markRemoved(t, path, "AND status = 'free'")),
    list: async (repo) =>
      (repo
        ? await db.q<WorkspaceRow>(
            "SELECT * FROM workspaces WHERE repo = $1 AND status != 'removed' ORDER BY n",
            [repo],
          )
        : // Repositories bytewise, as SQLite orders them, whatever the database's collation.
          await db.q<WorkspaceRow>(
            `SELECT * FROM workspaces WHERE status != 'removed' ORDER BY repo COLLATE "C", n`,
          )
      ).map(toWorkspace),
  };
}

export function pgProcessGroupStore(db: PgDb): AsyncProcessGroupStore {
  return {
    record: (g) =>
      db.tx(
        async (t) =>
          (await t.one<ProcessGroup>(
            'INSERT INTO process_groups (job_id, workspace_path, pgid, start_ticks, host, label, started_at) VALUES ($1,$2,$3,$4,$5,$6,$7) RETURNING *',
            [g.job_id, g.workspace_path, g.pgid, g.start_ticks, g.host, g.label, nowIso()],
          ))!,
      ),
    forget: (id) =>
      db.tx(async (t) => {
        await t.q('DELETE FROM process_groups WHERE id = $1', [id]);
      }),
    list: (filter) =>
      'job_id' in filter
        ? db.q<ProcessGroup>('SELECT * FROM process_groups WHERE job_id = $1 ORDER BY id', [filter.job_id])
        : db.q<ProcessGroup>('SELECT * FROM process_groups WHERE workspace_path = $1 ORDER BY id', [
            filter.workspace_path,
          ]),
  };
}

/** A runner's record, named through the store's API (the model's file may move). */
type BacklogRunnerRecord = NonNullable<Awaited<ReturnType<AsyncRunnerStore['get']>>>;

export function pgRunnerStore(db: PgDb): AsyncRunnerStore {
  const get = async (e: Q, id: number, lock = ''): Promise<BacklogRunnerRecord | null> => {
    const r = await e.one<RunnerRow>(`SELECT * FROM runners WHERE id = $1 ${lock}`, [id]);
    return r ? toRunner(r) : null;
  };
  return {
    register: (input) =>
      db.tx(async (t) => {
        const now = nowIso();
        const r = (await t.one<RunnerRow>(
          'INSERT INTO runners (repo, pid, host, slots, watch, lands, started_at, heartbeat_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8) RETURNING *',
          [
            input.repo,
            input.pid,
            input.host,
            Math.max(1, input.slots),
            input.watch ? 1 : 0,
            input.lands ? 1 : 0,
            now,
            now,
          ],
        ))!;
        return toRunner(r);
      }),
    get: (id) => get(db, id),
    list: async (repo) =>
      (await db.q<RunnerRow>('SELECT * FROM runners WHERE repo = $1 ORDER BY id', [repo])).map(toRunner),
    setSlots: (id, slots) =>
      db.tx(async (t) => {
        const r = await t.one<RunnerRow>('UPDATE runners SET slots = $1 WHERE id = $2 RETURNING *', [
          Math.max(1, slots),
          id,
        ]);
        if (!r) throw new UserError(`the backlog runner ${id} is not running any more`);
        return toRunner(r);
      }),
    takeStart: (id, todoId, takenElsewhere) =>
      db.tx(async (t) => {
        const me = await get(t, id);
        if (!me) return false;
        // Every runner of the repo, locked in id order: two takeStarts of one repo queue here.
        const all = (
          await t.q<RunnerRow>('SELECT * FROM runners WHERE repo = $1 ORDER BY id FOR UPDATE', [me.repo])
        ).map(toRunner);
        const mine = all.find((r) => r.id === id);
        if (!mine) return false;
        if (takenElsewhere(all.filter((r) => r.id !== id))) return false;
        // Read after the runners' rows are locked: a claim that a runner saw
        // and took off its list was committed before, and is seen here.
        const todo = await t.one<{ status: string }>('SELECT status FROM todos WHERE repo = $1 AND id = $2', [
          me.repo,
          todoId,
        ]);
        if (todo && todo.status !== 'open') return false;
        if (!mine.starting.includes(todoId))
          await t.q('UPDATE runners SET starting = $1 WHERE id = $2', [
            JSON.stringify([...mine.starting, todoId]),
            id,
          ]);
        return true;
      }),
    setStarting: (id, todoIds) =>
      db.tx(async (t) => {
        await t.q('UPDATE runners SET starting = $1 WHERE id = $2', [JSON.stringify(todoIds), id]);
      }),
    heartbeat: (id) =>
      db.tx(async (t) => {
        await t.q('UPDATE runners SET heartbeat_at = $1 WHERE id = $2', [nowIso(), id]);
      }),
    remove: (id) =>
      db.tx(async (t) => {
        await t.q('DELETE FROM runners WHERE id = $1', [id]);
      }),
  };
}
