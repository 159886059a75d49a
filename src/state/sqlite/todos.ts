import type { DatabaseSync } from 'node:sqlite';
import { UserError } from '../../errors.js';
import { matchPrefix } from '../../model/prefix.js';
import { depCycle } from '../../model/backlog.js';
import type { Todo, TodoStatus, TodoType } from '../../model/todo.js';
import type { NewTodo, TodoStore } from '../api.js';
import { nowIso, shortId } from '../ids.js';
import { NEXT_VERSION, transaction } from './db.js';

const TYPES: readonly TodoType[] = ['task', 'bug', 'feature', 'chore'];

export interface TodoRow {
  id: string;
  repo: string;
  title: string;
  description: string;
  type: string;
  priority: number;
  deps: string;
  status: string;
  created_at: string;
  updated_at: string;
  reopened_at: string | null;
}

export const toTodo = (r: TodoRow): Todo => ({
  id: r.id,
  repo: r.repo,
  title: r.title,
  description: r.description,
  type: r.type as TodoType,
  priority: r.priority,
  deps: JSON.parse(r.deps) as string[],
  status: r.status as TodoStatus,
  created_at: r.created_at,
  updated_at: r.updated_at,
  reopened_at: r.reopened_at ?? null,
});

export function checkTitle(title: string): string {
  const t = title.trim();
  if (!t) throw new UserError('a todo needs a title (--title "...")');
  return t;
}
export function checkType(type: TodoType): TodoType {
  if (!TYPES.includes(type))
    throw new UserError(`unknown todo type "${type}": use one of ${TYPES.join(', ')}`);
  return type;
}
export function checkPriority(priority: number): number {
  if (!Number.isInteger(priority) || priority < 0 || priority > 4)
    throw new UserError(`priority must be an integer from 0 (highest) to 4 (lowest), got ${priority}`);
  return priority;
}

export function sqliteTodoStore(db: DatabaseSync): TodoStore {
  const byId = db.prepare('SELECT * FROM todos WHERE repo = ? AND id = ?');
  const all = db.prepare('SELECT * FROM todos WHERE repo = ? ORDER BY priority, created_at');
  const stamp = db.prepare('SELECT count(*) AS n, max(updated_at) AS at FROM todos WHERE repo = ?');
  const changedAfter = db.prepare('SELECT * FROM todos WHERE repo = ? AND changed_version > ?');

  const store: TodoStore = {
    create(repo: string, input: NewTodo): Todo {
      const title = checkTitle(input.title);
      const type = checkType(input.type ?? 'task');
      const priority = checkPriority(input.priority ?? 2);
      return transaction(db, () => {
        // A new todo cannot close a cycle: nothing depends on it yet.
        const deps = resolveDeps(repo, input.deps ?? []);
        let id = shortId(title);
        while (byId.get(repo, id)) id = shortId(title);
        const now = nowIso();
        db.prepare(
          `INSERT INTO todos (id, repo, title, description, type, priority, deps, status, created_at, updated_at, changed_version) VALUES (?,?,?,?,?,?,?,?,?,?, ${NEXT_VERSION})`,
        ).run(
          id,
          repo,
          title,
          input.description ?? '',
          type,
          priority,
          JSON.stringify(deps),
          'open',
          now,
          now,
        );
        return toTodo(byId.get(repo, id) as unknown as TodoRow);
      });
    },
    stamp(repo) {
      const r = stamp.get(repo) as { n: number; at: string | null };
      return `${r.n}|${r.at ?? ''}`;
    },
    listChangedAfter(repo, after) {
      return (changedAfter.all(repo, after) as unknown as TodoRow[]).map(toTodo);
    },
    list(repo, filter) {
      const rows = (all.all(repo) as unknown as TodoRow[]).map(toTodo);
      return filter?.status ? rows.filter((t) => t.status === filter.status) : rows;
    },
    get(repo, id) {
      const r = byId.get(repo, id) as unknown as TodoRow | undefined;
      return r ? toTodo(r) : null;
    },
    resolve(repo, prefix) {
      // An exact id (every dep a new todo names) without reading every id of the repo.
      const exact = byId.get(repo, prefix.trim().toLowerCase()) as unknown as TodoRow | undefined;
      if (exact) return toTodo(exact);
      const ids = db.prepare('SELECT id, title FROM todos WHERE repo = ?').all(repo) as {
        id: string;
        title: string;
      }[];
      const m = matchPrefix(ids, prefix, (t) => t.id);
      if (m.kind === 'one') return toTodo(byId.get(repo, m.item.id) as unknown as TodoRow);
      if (m.kind === 'none')
        throw new UserError(`no todo matches "${prefix}" in this repository. List them with: ii todo list`);
      throw new UserError(
        `"${prefix}" matches ${m.items.length} todos; type more of the id:\n` +
          m.items.map((t) => `  ${t.id}  ${t.title}`).join('\n'),
      );
    },
    update(repo, id, patch) {
      const set: string[] = [];
      const params: (string | number)[] = [];
      const change = (column: string, value: string | number) => {
        set.push(`${column} = ?`);
        params.push(value);
      };
      if (patch.title !== undefined) change('title', checkTitle(patch.title));
      if (patch.description !== undefined) change('description', patch.description);
      if (patch.type !== undefined) change('type', checkType(patch.type));
      if (patch.priority !== undefined) change('priority', checkPriority(patch.priority));
      return transaction(db, () => {
        const todo = store.resolve(repo, id);
        if (patch.deps !== undefined) {
          const deps = resolveDeps(repo, patch.deps);
          if (deps.includes(todo.id)) throw new UserError(`todo ${todo.id} cannot depend on itself.`);
          const rows = db.prepare('SELECT id, deps FROM todos WHERE repo = ?').all(repo) as {
            id: string;
            deps: string;
          }[];
          const graph = new Map(rows.map((r) => [r.id, JSON.parse(r.deps) as string[]]));
          const cycle = depCycle(todo.id, deps, (t) => graph.get(t) ?? []);
          if (cycle)
            throw new UserError(
              `todo ${todo.id} cannot depend on ${cycle[1]}: that would make a cycle, ${cycle.join(' → ')}. Nothing was changed.`,
            );
          change('deps', JSON.stringify(deps));
        }
        if (set.length === 0) return todo;
        db.prepare(
          `UPDATE todos SET ${set.join(', ')}, updated_at = ?, changed_version = ${NEXT_VERSION} WHERE repo = ? AND id = ?`,
        ).run(...params, nowIso(), repo, todo.id);
        return toTodo(byId.get(repo, todo.id) as unknown as TodoRow);
      });
    },
    close(repo, id, o) {
      return transaction(db, () => {
        const todo = store.resolve(repo, id);
        if (!o?.whileHeld) refuseIfHeld(repo, todo, 'close');
        if (todo.status === 'closed') return todo;
        db.prepare(
          `UPDATE todos SET status = 'closed', updated_at = ?, changed_version = ${NEXT_VERSION} WHERE repo = ? AND id = ?`,
        ).run(nowIso(), repo, todo.id);
        return toTodo(byId.get(repo, todo.id) as unknown as TodoRow);
      });
    },
    reopen(repo, id) {
      return transaction(db, () => {
        const todo = store.resolve(repo, id);
        refuseIfHeld(repo, todo, 'reopen');
        const now = nowIso();
        db.prepare(
          `UPDATE todos SET status = 'open', reopened_at = ?, updated_at = ?, changed_version = ${NEXT_VERSION} WHERE repo = ? AND id = ?`,
        ).run(now, now, repo, todo.id);
        return toTodo(byId.get(repo, todo.id) as unknown as TodoRow);
      });
    },
    setStatus(repo, id, status, o) {
      return transaction(db, () => {
        const now = nowIso();
        const res = db
          .prepare(
            `UPDATE todos SET status = ?, updated_at = ?, changed_version = ${NEXT_VERSION} WHERE repo = ? AND id = ?${o?.unlessClosed ? " AND status != 'closed'" : ''}`,
          )
          .run(status, now, repo, id);
        const row = byId.get(repo, id) as unknown as TodoRow | undefined;
        if (res.changes === 0 && !row) throw new UserError(`no todo ${id} in this repository`);
        return toTodo(row as TodoRow);
      });
    },
  };
  /** Exact ids for what was given (ids or prefixes), each once, in the order given. */
  function resolveDeps(repo: string, given: readonly string[]): string[] {
    const ids = given.map((d) => {
      try {
        return store.resolve(repo, d).id;
      } catch (err) {
        // Say it was a dep: the todo being made or edited is not the one missing.
        if (err instanceof UserError) throw new UserError(`dep "${d}": ${err.message}`, err.exitCode);
        throw err;
      }
    });
    return [...new Set(ids)];
  }

  /** A todo a job is working on is not closed or reopened under it. */
  function refuseIfHeld(repo: string, todo: Todo, verb: string): void {
    const job = db
      .prepare("SELECT id FROM jobs WHERE repo = ? AND todo_id = ? AND status = 'active' LIMIT 1")
      .get(repo, todo.id) as { id: string } | undefined;
    if (job)
      throw new UserError(
        `cannot ${verb} todo ${todo.id}: job ${job.id} is working on it. Stop it first: ii job abandon ${job.id}`,
      );
  }

  return store;
}
