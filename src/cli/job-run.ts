// ii job do | retry | abandon | diff: the commands that start, stop and
// compare jobs. Definitions only: the bodies (and the agent, git and template
// code they need) live in job-run-actions.ts and load when one runs.
import { Command, Option } from 'commander';
import { TODO_TYPES } from '../model/enums.js';
import type { Todo } from '../model/todo.js';
import { jobCommand } from './job.js';
import { parseList, parsePriority } from './todo.js';

export interface DoOptions {
  title?: string;
  type: Todo['type'];
  priority: number;
  desc?: string;
  deps: string[];
  edit?: boolean;
  rev?: string;
  agent?: string;
  autoCommit?: boolean | string;
  allowFailingBaseline?: boolean;
}

const BASELINE_HELP =
  'go on when the tests already fail on the untouched base (normally the job stops before any agent turn); the review is told which were failing';

export function registerJobRunCommands(program: Command): void {
  const job = jobCommand(program);
  const actions = () => import('./job-run-actions.js');

  job
    .command('do')
    .description(
      'run a todo as a job: an agent implements it in a fresh git worktree, the tests run, an agent reviews, the change is committed; loops until the work is accepted',
    )
    .argument('[todo]', 'todo id or any unique prefix (omit it to create one with --title or in $EDITOR)')
    .option('--title <title>', 'create a new todo with this title and run it')
    .addOption(new Option('--type <type>', 'type of the new todo').choices(TODO_TYPES).default('task'))
    .option('--priority <0-4>', 'priority of the new todo, 0 highest', parsePriority, 2)
    .option('--description, --desc <text>', 'description of the new todo')
    .option('--deps <ids>', 'comma-separated ids the new todo depends on', parseList, [])
    .option(
      '--edit',
      'open $EDITOR on the new todo before running it (the default with no todo and no --title)',
    )
    .option('--no-edit', 'never open $EDITOR')
    .option('--rev <rev>', 'base revision for the workspace (default: the trunk)')
    .option(
      '--agent <name|path>',
      'agent preset (opencode, claude, gemini, codex, scripted) or a command path',
    )
    .option(
      '--auto-commit [bool]',
      'ask the agent to commit its own work after each implement pass (true|false)',
    )
    .option('--allow-failing-baseline', BASELINE_HELP)
    .action(async (id: string | undefined, o: DoOptions) => (await actions()).jobDo(id, o));

  job
    .command('retry')
    .description(
      "a new job for the same todo as a finished one (the old job's history is kept), run in the foreground",
    )
    .argument('<job>', 'job id or any unique prefix')
    .option('--agent <name|path>', 'agent preset or command path for the new job')
    .option('--rev <rev>', 'base revision for the new workspace (default: the trunk)')
    .option('--allow-failing-baseline', BASELINE_HELP)
    .action(async (id: string, o: { agent?: string; rev?: string; allowFailingBaseline?: boolean }) =>
      (await actions()).jobRetry(id, o),
    );

  job
    .command('abandon')
    .description(
      'stop a running job: its runner is asked to stop (within 2 s); a job whose runner is gone is cleaned up directly',
    )
    .argument('<job>', 'job id or any unique prefix')
    .option('--reason <text>', 'why (recorded on the job)')
    .option('--wait', 'wait until the runner has stopped the job')
    .action(async (id: string, o: { reason?: string; wait?: boolean }) =>
      (await actions()).jobAbandon(id, o),
    );

  job
    .command('diff')
    .description(
      'an iteration against the previous one: stage, status, files, tokens and cost, then the code diff ' +
        '(at most 2,000 lines a file and 10,000 in all; what is left out is said, with the git command that shows it; binary files by size)',
    )
    .argument('<job>', 'job id or any unique prefix')
    .option('--change <n>', 'which change, 1-based (default: the last)', (v) => Number(v))
    .option('--iteration <k>', 'which iteration of the change, 1-based (default: the last)', (v) => Number(v))
    .option(
      '--from <c.i>',
      'compare two iterations, any pair, across changes too: the earlier one, as change.iteration (e.g. 1.1)',
    )
    .option('--to <c.i>', 'the other iteration of the pair (default: the last one)')
    .option(
      '--json',
      'the iteration diff as JSON (the capped code diff as a string, diff_complete false when something was left out)',
    )
    .action(
      async (
        id: string,
        o: { change?: number; iteration?: number; from?: string; to?: string; json?: boolean },
      ) => (await actions()).jobDiff(id, o),
    );
}
