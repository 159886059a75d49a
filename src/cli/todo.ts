// ii todo create | list | show
import { Command, InvalidArgumentError, Option } from 'commander';
import { TodoStatus, TodoType, type Todo } from '../model/todo.js';
import { shortestUniquePrefix } from '../model/prefix.js';
import { currentRepo, withStore } from './context.js';
import { age, printJson, style, table } from './format.js';

export function parsePriority(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 4)
    throw new InvalidArgumentError('priority is an integer from 0 (highest) to 4 (lowest).');
  return n;
}
export const parseList = (v: string): string[] =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function registerTodoCommands(program: Command): void {
  const todo = program.command('todo').description('create and inspect todos (the work you hand to agents)');

  todo
    .command('create')
    .description('create a todo; prints its id')
    .requiredOption('--title <title>', 'one-line title')
    .option('--description, --desc <text>', 'what to do, in as much detail as the agent needs', '')
    .addOption(new Option('--type <type>', 'kind of work').choices(TodoType.options).default('task'))
    .option('--priority <0-4>', '0 is the highest priority, 4 the lowest', parsePriority, 2)
    .option('--deps <ids>', 'comma-separated ids (or prefixes) of todos this one depends on', parseList, [])
    .option('--json', 'print the todo as JSON')
    .action(
      async (o: {
        title: string;
        desc: string;
        type: Todo['type'];
        priority: number;
        deps: string[];
        json?: boolean;
      }) => {
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
      },
    );

  todo
    .command('list')
    .description('list the todos of this repository')
    .addOption(
      new Option('--status <status>', 'only todos with this status')
        .choices(TodoStatus.options)
        .argParser((v) => v.toLowerCase()),
    )
    .option('--json', 'print JSON')
    .action(async (o: { status?: Todo['status']; json?: boolean }) => {
      const { slug } = currentRepo();
      const todos = await withStore((s) => s.todos.list(slug, o.status ? { status: o.status } : {}));
      if (o.json) return printJson(todos);
      if (todos.length === 0) {
        process.stdout.write(
          o.status
            ? `No ${o.status} todos.\n`
            : 'No todos yet. Create one with: ii todo create --title "..."\n',
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
          t.title,
        ];
      });
      process.stdout.write(table(['ID', 'PRI', 'TYPE', 'STATUS', 'AGE', 'TITLE'], rows) + '\n');
    });

  todo
    .command('show')
    .description('show one todo')
    .argument('<id>', 'todo id or any unique prefix')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const { slug } = currentRepo();
      const t = await withStore((s) => s.todos.resolve(slug, id));
      if (o.json) return printJson(t);
      const lines = [
        `todo ${t.id}: ${t.title}`,
        `  status:   ${t.status}`,
        `  type:     ${t.type}`,
        `  priority: P${t.priority}`,
        `  deps:     ${t.deps.length ? t.deps.join(', ') : 'none'}`,
        `  created:  ${t.created_at}`,
      ];
      if (t.description) lines.push('', ...t.description.split('\n').map((l) => `  ${l}`));
      process.stdout.write(lines.join('\n') + '\n');
    });
}
