// The bodies of ii todo create | list | show (definitions in index.ts).
import { shortestUniquePrefix } from '../../model/prefix.js';
import { shownLine, shownText } from '../../text/shown.js';
import { currentRepo, withStore } from '../context.js';
import { age, printJson, style, table } from '../format.js';
import type { TodoCreateOptions, TodoListOptions, TodoShowOptions } from './options.js';

export async function todoCreate(o: TodoCreateOptions): Promise<void> {
  const { slug } = currentRepo();
  const t = await withStore((s) =>
    s.todos.create(slug, {
      title: o.title,
      description: o.desc,
      type: o.type,
      priority: o.priority,
      deps: o.deps,
    }),
  );
  if (o.json) printJson(t);
  else process.stdout.write(`${t.id}\n`);
}

export async function todoList(o: TodoListOptions): Promise<void> {
  const { slug } = currentRepo();
  const todos = await withStore((s) => s.todos.list(slug, o.status ? { status: o.status } : {}));
  if (o.json) return printJson(todos);
  if (todos.length === 0) {
    process.stdout.write(
      o.status ? `No ${o.status} todos.\n` : 'No todos yet. Create one with: ii todo create --title "..."\n',
    );
    return;
  }
  const st = style();
  const ids = todos.map((t) => t.id);
  const rows = todos.map((t) => {
    const n = shortestUniquePrefix(t.id, ids);
    return [
      st.bold(t.id.slice(0, n)) + st.dim(t.id.slice(n)),
      `P${t.priority}`,
      t.type,
      t.status,
      age(t.created_at),
      shownLine(t.title),
    ];
  });
  process.stdout.write(table(['ID', 'PRI', 'TYPE', 'STATUS', 'AGE', 'TITLE'], rows) + '\n');
}

export async function todoShow(id: string, o: TodoShowOptions): Promise<void> {
  const { slug } = currentRepo();
  const t = await withStore((s) => s.todos.resolve(slug, id));
  if (o.json) return printJson(t);
  const lines = [
    `todo ${t.id}: ${shownLine(t.title)}`,
    `  status:   ${t.status}`,
    `  type:     ${t.type}`,
    `  priority: P${t.priority}`,
    `  deps:     ${t.deps.length ? t.deps.join(', ') : 'none'}`,
    `  created:  ${t.created_at}`,
  ];
  if (t.description)
    lines.push(
      '',
      ...shownText(t.description)
        .split('\n')
        .map((l) => `  ${l}`),
    );
  process.stdout.write(lines.join('\n') + '\n');
}
