// The bodies of ii todo create | edit | close | reopen | list | show (definitions in index.ts).
import { localProbe } from '../../proc/alive.js';
import { isStale } from '../../model/derive.js';
import { backlog, byRunOrder, describeBlocker, type Backlog } from '../../model/backlog.js';
import { shortestUniquePrefix } from '../../model/prefix.js';
import { runnerAlive, runnersLand } from '../../model/backlog-runner.js';
import { doneWithoutChanges, todoStatusWords } from '../../model/todo-outcome.js';
import type { Todo } from '../../model/todo.js';
import type { AsyncStateStore } from '../../state/async-api.js';
import { redactDeep } from '../../text/redact.js';
import { shownLine, shownText } from '../../text/shown.js';
import { configOrDefaults } from '../config-or-defaults.js';
import { currentRepo, withStore, type RepoContext } from '../context.js';
import { age, printJson, style, table } from '../format.js';
import { reapDeadRunnersSaying } from '../reap.js';
import { descriptionOf } from './description-file.js';
import type { TodoCreateOptions, TodoEditOptions, TodoListOptions, TodoShowOptions } from './options.js';

export async function todoCreate(o: TodoCreateOptions): Promise<void> {
  const { slug } = currentRepo();
  const description = (await descriptionOf(o)) ?? '';
  const t = await withStore(
    async (s) =>
      await s.todos.create(slug, {
        title: o.title,
        description,
        type: o.type,
        priority: o.priority,
        deps: o.deps,
      }),
  );
  if (o.json) printJson(t);
  else process.stdout.write(`${t.id}\n`);
}

export async function todoEdit(id: string, o: TodoEditOptions): Promise<void> {
  const { slug } = currentRepo();
  const description = await descriptionOf(o);
  const t = await withStore(
    async (s) =>
      await s.todos.update(slug, id, {
        ...(o.title !== undefined ? { title: o.title } : {}),
        ...(description !== undefined ? { description } : {}),
        ...(o.type !== undefined ? { type: o.type } : {}),
        ...(o.priority !== undefined ? { priority: o.priority } : {}),
        ...(o.deps !== undefined ? { deps: o.deps } : {}),
      }),
  );
  if (o.json) printJson(t);
  else process.stdout.write(`todo ${t.id} updated.\n`);
}

export async function todoClose(id: string): Promise<void> {
  const { slug } = currentRepo();
  const t = await withStore(async (s) => await s.todos.close(slug, id));
  process.stdout.write(`todo ${t.id} closed; ii todo reopen ${t.id} opens it again.\n`);
}

export async function todoReopen(id: string): Promise<void> {
  const { slug } = currentRepo();
  const t = await withStore(async (s) => await s.todos.reopen(slug, id));
  process.stdout.write(
    `todo ${t.id} is open; ${t.deps.length ? 'ii run takes it once its deps are done' : 'ii run takes it in its turn'}.\n`,
  );
}

/** The repository's backlog, with [run] max-attempts from its config (its default when the config is broken); and its done todos that made nothing. */
async function backlogOf(
  store: AsyncStateStore,
  repo: RepoContext,
  todos: Todo[],
  command: string,
): Promise<Backlog & { empty: Set<string> }> {
  const maxAttempts = configOrDefaults(repo.root, command).run['max-attempts'];
  const now = Date.now();
  const briefs = await store.jobs.briefs(repo.slug);
  // Decided as the running ii run decides (as the board does): under one
  // that lands, a todo waits for its deps to land.
  const lands = runnersLand(
    (await store.runners.list(repo.slug)).filter((r) => runnerAlive(r, now, localProbe)),
  );
  const plan = backlog(todos, briefs, {
    maxAttempts,
    isStale: (j) => isStale(j, now, localProbe),
    ...(lands ? { depsLanded: true } : {}),
  });
  return { ...plan, empty: doneWithoutChanges(todos, briefs) };
}

export async function todoList(o: TodoListOptions): Promise<void> {
  const repo = currentRepo();
  const { todos, plan } = await withStore(async (s) => {
    // A todo held by a job whose runner is gone is open again once met.
    await reapDeadRunnersSaying(s, repo.slug, 'ii todo list');
    const all = await s.todos.list(repo.slug);
    return { todos: all, plan: await backlogOf(s, repo, all, 'ii todo list') };
  });
  const shown = o.ready
    ? plan.ready.filter((t) => !o.status || t.status === o.status)
    : todos.filter((t) => !o.status || t.status === o.status).sort(byRunOrder);
  if (o.json) return printJson(redactDeep(shown));
  if (shown.length === 0) {
    process.stdout.write(
      o.ready
        ? `No todo is ready to run${plan.blocked.length ? ` (${plan.blocked.length} blocked: ii todo list shows why)` : ''}.\n`
        : o.status
          ? `No ${o.status} todos.\n`
          : 'No todos yet. Create one with: ii todo create --title "..."\n',
    );
    return;
  }
  const st = style();
  const blocked = new Map(plan.blocked.map((b) => [b.todo.id, b.blockers]));
  const ids = todos.map((t) => t.id);
  const short = (id: string) => {
    const n = shortestUniquePrefix(id, ids);
    return st.bold(id.slice(0, n)) + st.dim(id.slice(n));
  };
  const rows = shown.map((t) => [
    short(t.id),
    `P${t.priority}`,
    t.type,
    blocked.has(t.id) ? st.yellow('blocked') : todoStatusWords(t, plan.empty.has(t.id)),
    age(t.created_at),
    shownLine(t.title),
  ]);
  const lines = [table(['ID', 'PRI', 'TYPE', 'STATUS', 'AGE', 'TITLE'], rows)];
  const why = shown.filter((t) => blocked.has(t.id));
  if (why.length) {
    lines.push('', 'blocked:');
    for (const t of why)
      lines.push(`  ${short(t.id)}  ${shownLine((blocked.get(t.id) ?? []).map(describeBlocker).join('; '))}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

export async function todoShow(id: string, o: TodoShowOptions): Promise<void> {
  const repo = currentRepo();
  const { t, empty, blockers, titles } = await withStore(async (s) => {
    const t = await s.todos.resolve(repo.slug, id);
    const all = await s.todos.list(repo.slug);
    const plan = await backlogOf(s, repo, all, 'ii todo show');
    return {
      t,
      empty: plan.empty.has(t.id),
      blockers: plan.blocked.find((b) => b.todo.id === t.id)?.blockers ?? [],
      titles: new Map(all.map((x) => [x.id, x])),
    };
  });
  if (o.json) return printJson(redactDeep(t));
  const deps = t.deps.map((d) => {
    const dep = titles.get(d);
    return dep ? `${d} (${dep.status}) ${shownLine(dep.title)}` : `${d} (missing)`;
  });
  const lines = [
    `todo ${t.id}: ${shownLine(t.title)}`,
    `  status:   ${todoStatusWords(t, empty)}${blockers.length ? ' (blocked)' : ''}`,
    `  type:     ${t.type}`,
    `  priority: P${t.priority}`,
    `  deps:     ${deps.length ? deps.join('\n            ') : 'none'}`,
    `  created:  ${t.created_at}`,
  ];
  for (const b of blockers) lines.push(`  blocked:  ${shownLine(describeBlocker(b))}`);
  // Indented as one text, not pushed line by line: a long description has
  // more lines than a spread's arguments may hold (200,000 lines overflowed the stack).
  const body = t.description ? `\n\n${shownText(t.description).replace(/^/gm, '  ')}` : '';
  process.stdout.write(lines.join('\n') + body + '\n');
}
