// ii todo create | edit | close | reopen | list | show: definitions only; the bodies live in
// actions.ts and are imported when a command runs.
import { Command, Option } from 'commander';
import { TODO_STATUSES, TODO_TYPES } from '../../model/enums.js';
import {
  parseChoice,
  parseList,
  parsePriority,
  type TodoCreateOptions,
  type TodoEditOptions,
  type TodoListOptions,
  type TodoShowOptions,
} from './options.js';

export function registerTodoCommands(program: Command): void {
  const todo = program.command('todo').description('create and inspect todos (the work you hand to agents)');
  const actions = () => import('./actions.js');

  todo
    .command('create')
    // The verb a newcomer tries first.
    .alias('add')
    .description('create a todo; prints its id')
    .requiredOption('--title <title>', 'one-line title')
    .option('--description, --desc <text>', 'what to do, in as much detail as the agent needs')
    .option('--description-file <file>', 'the description from a file (- reads stdin): for a long one')
    .addOption(new Option('--type <type>', 'kind of work').choices(TODO_TYPES).default('task'))
    .option('--priority <0-4>', '0 is the highest priority, 4 the lowest', parsePriority, 2)
    .option('--deps <ids>', 'comma-separated ids (or prefixes) of todos this one depends on', parseList, [])
    .option('--json', 'print the todo as JSON')
    .action(async (o: TodoCreateOptions) => (await actions()).todoCreate(o));

  todo
    .command('edit')
    .description('change a todo; only the fields given change')
    .argument('<id>', 'todo id or any unique prefix')
    .option('--title <title>', 'one-line title')
    .option('--description, --desc <text>', 'what to do')
    .option('--description-file <file>', 'the description from a file (- reads stdin)')
    .addOption(new Option('--type <type>', 'kind of work').choices(TODO_TYPES))
    .option('--priority <0-4>', '0 is the highest priority, 4 the lowest', parsePriority)
    .option(
      '--deps <ids>',
      'comma-separated ids (or prefixes) it depends on, replacing the old ones ("" for none); a cycle is refused',
      parseList,
    )
    .option('--json', 'print the todo as JSON')
    .action(async (id: string, o: TodoEditOptions) => (await actions()).todoEdit(id, o));

  todo
    .command('close')
    .description('close a todo: it will not run (ii todo reopen undoes it)')
    .argument('<id>', 'todo id or any unique prefix')
    .action(async (id: string) => (await actions()).todoClose(id));

  todo
    .command('reopen')
    .description('open a todo again (done, closed, or left alone after failing [run] max-attempts times)')
    .argument('<id>', 'todo id or any unique prefix')
    .action(async (id: string) => (await actions()).todoReopen(id));

  todo
    .command('list')
    .description(
      'list the todos of this repository in run order (priority, then oldest); open ones that cannot run yet are marked blocked, with why',
    )
    .addOption(
      new Option('--status <status>', 'only todos with this status')
        .choices(TODO_STATUSES)
        .argParser(parseChoice('--status', TODO_STATUSES)),
    )
    .option('--ready', 'only the todos ii run would take now, in the order it takes them')
    .option('--json', 'print JSON')
    .action(async (o: TodoListOptions) => (await actions()).todoList(o));

  todo
    .command('show')
    .description('show one todo')
    .argument('<id>', 'todo id or any unique prefix')
    .option('--json', 'print JSON')
    .action(async (id: string, o: TodoShowOptions) => (await actions()).todoShow(id, o));
}
