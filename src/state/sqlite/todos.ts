import type { DatabaseSync } from 'node:sqlite';
import { UserError } from '../../errors.js';
import { matchPrefix } from '../../model/prefix.js';
import type { Todo, TodoStatus, TodoType } from '../../model/todo.js';
import type { NewTodo, TodoStore } from '../api.js';
import { nowIso, shortId } from '../ids.js';
import { transaction } from './db.js';

const TYPES: readonly TodoType[] = ['task', 'bug', 'feature', 'chore'];

interface TodoRow {
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
}

const toTodo = (r: TodoRow): Todo => ({
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
});

export function sqliteTodoStore(db: DatabaseSync): TodoStore {
  const byId = db.prepare('SELECT * FROM todos WHERE repo = ? AND id = ?');
  const all = db.prepare('SELECT * FROM todos WHERE repo = ? ORDER BY priority, created_at');

  const store: TodoStore = {
    create(repo: string, input: NewTodo): Todo {
      const title = input.title.trim();
      if (!title) throw new UserError('a todo needs a title (--title "...")');
      const type = input.type ?? 'task';
      if (!TYPES.includes(type))
        throw new UserError(`unknown todo type "${type}": use one of ${TYPES.join(', ')}`);
      const priority = input.priority ?? 2;
      if (!Number.isInteger(priority) || priority < 0 || priority > 4)
        throw new UserError(`priority must be an integer from 0 (highest) to 4 (lowest), got ${priority}`);
      return transaction(db, () => {
        const deps = (input.deps ?? []).map((d) => store.resolve(repo, d).id);
        let id = shortId(title);
        while (byId.get(repo, id)) id = shortId(title);
        const now = nowIso();
        db.prepare(
          'INSERT INTO todos (id, repo, title, description, type, priority, deps, status, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)',
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
    list(repo, filter) {
      const rows = (all.all(repo) as unknown as TodoRow[]).map(toTodo);
      return filter?.status ? rows.filter((t) => t.status === filter.status) : rows;
    },
    get(repo, id) {
      const r = byId.get(repo, id) as unknown as TodoRow | undefined;
      return r ? toTodo(r) : null;
    },
    resolve(repo, prefix) {
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
    setStatus(repo, id, status) {
      return transaction(db, () => {
        const now = nowIso();
        const res = db
          .prepare('UPDATE todos SET status = ?, updated_at = ? WHERE repo = ? AND id = ?')
          .run(status, now, repo, id);
        if (res.changes === 0) throw new UserError(`no todo ${id} in this repository`);
        return toTodo(byId.get(repo, id) as unknown as TodoRow);
      });
    },
  };
  return store;
}
