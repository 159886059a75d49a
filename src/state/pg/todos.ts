// Todos on PostgreSQL: sqlite/todos.ts's rules, with row locks where SQLite
// had its one write lock. Dep edits of a repo take its advisory lock (two
// edits must not each close half of a cycle); closing or reopening a todo
// locks its row, as a claim does, so neither slips past the other.
import { UserError } from '../../errors.js';
import { depCycle } from '../../model/backlog.js';
import { matchPrefix } from '../../model/prefix.js';
import type { Todo } from '../../model/todo.js';
import type { NewTodo } from '../api.js';
import type { AsyncTodoStore } from '../async-api.js';
import { nowIso, shortId } from '../ids.js';
import { checkPriority, checkTitle, checkType, toTodo, type TodoRow } from '../sqlite/todos.js';
import type { PgDb, Q, Tx } from './db.js';

/** Serialises the dep edits of one repo (advisory, for this transaction). */
export const lockRepoTodos = (t: Tx, repo: string): Promise<unknown> =>
  t.q("SELECT pg_advisory_xact_lock(hashtext('ii.todos:' || $1))", [repo]);

export function pgTodoStore(db: PgDb): AsyncTodoStore {
  const get = async (e: Q, repo: string, id: string): Promise<Todo | null> => {
    const r = await e.one<TodoRow>('SELECT * FROM todos WHERE repo = $1 AND id = $2', [repo, id]);
    return r ? toTodo(r) : null;
  };
  const must = async (e: Q, repo: string, id: string): Promise<Todo> => {
    const t = await get(e, repo, id);
    if (!t) throw new UserError(`no todo ${id} in this repository`);
    return t;
  };

  async function resolve(e: Q, repo: string, prefix: string): Promise<Todo> {
    const exact = await get(e, repo, prefix.trim().toLowerCase());
    if (exact) return exact;
    const ids = await e.q<{ id: string; title: string }>('SELECT id, title FROM todos WHERE repo = $1', [
      repo,
    ]);
    const m = matchPrefix(ids, prefix, (t) => t.id);
    if (m.kind === 'one') return must(e, repo, m.item.id);
    if (m.kind === 'none')
      throw new UserError(`no todo matches "${prefix}" in this repository. List them with: ii todo list`);
    throw new UserError(
      `"${prefix}" matches ${m.items.length} todos; type more of the id:\n` +
        m.items.map((t) => `  ${t.id}  ${t.title}`).join('\n'),
    );
  }

  async function resolveDeps(e: Q, repo: string, given: readonly string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const d of given) {
      try {
        ids.push((await resolve(e, repo, d)).id);
      } catch (err) {
        if (err instanceof UserError) throw new UserError(`dep "${d}": ${err.message}`, err.exitCode);
        throw err;
      }
    }
    return [...new Set(ids)];
  }

  /** Locks the todo's row and refuses while a job works on it. */
  async function lockUnheld(t: Tx, repo: string, todo: Todo, verb: string): Promise<void> {
    await t.q('SELECT id FROM todos WHERE repo = $1 AND id = $2 FOR UPDATE', [repo, todo.id]);
    const job = await t.one<{ id: string }>(
      "SELECT id FROM jobs WHERE repo = $1 AND todo_id = $2 AND status = 'active' LIMIT 1",
      [repo, todo.id],
    );
    if (job)
      throw new UserError(
        `cannot ${verb} todo ${todo.id}: job ${job.id} is working on it. Stop it first: ii job abandon ${job.id}`,
      );
  }

  async function write(t: Tx, repo: string, id: string, set: string, params: unknown[]): Promise<Todo> {
    await t.q(
      `UPDATE todos SET ${set}${set ? ', ' : ''}updated_at = $${params.length + 1} WHERE repo = $${params.length + 2} AND id = $${params.length + 3}`,
      [...(params as string[]), nowIso(), repo, id],
    );
    t.stampTodo(repo, id);
    return must(t, repo, id);
  }

  return {
    // async: a refused title is a rejection, as every call's error is.
    create: async (repo, input: NewTodo) => {
      const title = checkTitle(input.title);
      const type = checkType(input.type ?? 'task');
      const priority = checkPriority(input.priority ?? 2);
      return db.tx(async (t) => {
        await lockRepoTodos(t, repo);
        const deps = await resolveDeps(t, repo, input.deps ?? []);
        let id = shortId(title);
        while (await get(t, repo, id)) id = shortId(title);
        const now = nowIso();
        await t.q(
          'INSERT INTO todos (id, repo, title, description, type, priority, deps, status, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)',
          [id, repo, title, input.description ?? '', type, priority, JSON.stringify(deps), 'open', now, now],
        );
        t.stampTodo(repo, id);
        return must(t, repo, id);
      });
    },
    stamp: async (repo) => {
      const r = (await db.one<{ n: number; at: string | null }>(
        'SELECT count(*) AS n, max(updated_at) AS at FROM todos WHERE repo = $1',
        [repo],
      ))!;
      return `${r.n}|${r.at ?? ''}`;
    },
    listChangedAfter: async (repo, after) =>
      (
        await db.q<TodoRow>('SELECT * FROM todos WHERE repo = $1 AND changed_version > $2', [repo, after])
      ).map(toTodo),
    list: async (repo, filter) => {
      const rows = (
        await db.q<TodoRow>('SELECT * FROM todos WHERE repo = $1 ORDER BY priority, created_at', [repo])
      ).map(toTodo);
      return filter?.status ? rows.filter((t) => t.status === filter.status) : rows;
    },
    get: (repo, id) => get(db, repo, id),
    resolve: (repo, prefix) => resolve(db, repo, prefix),
    update: async (repo, id, patch) => {
      const set: string[] = [];
      const params: (string | number)[] = [];
      const change = (column: string, value: string | number) => {
        params.push(value);
        set.push(`${column} = $${params.length}`);
      };
      if (patch.title !== undefined) change('title', checkTitle(patch.title));
      if (patch.description !== undefined) change('description', patch.description);
      if (patch.type !== undefined) change('type', checkType(patch.type));
      if (patch.priority !== undefined) change('priority', checkPriority(patch.priority));
      return db.tx(async (t) => {
        const todo = await resolve(t, repo, id);
        if (patch.deps !== undefined) {
          await lockRepoTodos(t, repo);
          const deps = await resolveDeps(t, repo, patch.deps);
          if (deps.includes(todo.id)) throw new UserError(`todo ${todo.id} cannot depend on itself.`);
          const rows = await t.q<{ id: string; deps: string }>('SELECT id, deps FROM todos WHERE repo = $1', [
            repo,
          ]);
          const graph = new Map(rows.map((r) => [r.id, JSON.parse(r.deps) as string[]]));
          const cycle = depCycle(todo.id, deps, (x) => graph.get(x) ?? []);
          if (cycle)
            throw new UserError(
              `todo ${todo.id} cannot depend on ${cycle[1]}: that would make a cycle, ${cycle.join(' → ')}. Nothing was changed.`,
            );
          change('deps', JSON.stringify(deps));
        }
        if (set.length === 0) return todo;
        return write(t, repo, todo.id, set.join(', '), params);
      });
    },
    close: (repo, id, o) =>
      db.tx(async (t) => {
        const todo = await resolve(t, repo, id);
        if (!o?.whileHeld) await lockUnheld(t, repo, todo, 'close');
        if (todo.status === 'closed') return todo;
        return write(t, repo, todo.id, "status = 'closed'", []);
      }),
    reopen: (repo, id) =>
      db.tx(async (t) => {
        const todo = await resolve(t, repo, id);
        await lockUnheld(t, repo, todo, 'reopen');
        return write(t, repo, todo.id, "status = 'open', reopened_at = $1", [nowIso()]);
      }),
    setStatus: (repo, id, status, o) =>
      db.tx(async (t) => {
        // FOR UPDATE: a close committed meanwhile is the status read here.
        const r = await t.one<TodoRow>('SELECT * FROM todos WHERE repo = $1 AND id = $2 FOR UPDATE', [
          repo,
          id,
        ]);
        if (!r) throw new UserError(`no todo ${id} in this repository`);
        if (o?.unlessClosed && r.status === 'closed') return toTodo(r);
        return write(t, repo, id, 'status = $1', [status]);
      }),
  };
}
