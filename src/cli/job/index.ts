// ii job list | show | logs | do | retry | abandon | answer | diff: definitions only.
// Each body lives in its own file beside this one (list-show.ts, logs.ts,
// do.ts, retry.ts, abandon.ts, answer.ts, diff.ts) and loads when its command runs, so
// `ii job list` never loads the agent, git or template code `ii job do` needs.
// `ii job journal | note` join this group from src/cli/journal.
import type { Command } from 'commander';
import { Argument, InvalidArgumentError, Option } from 'commander';
import { JOB_STATUSES, TODO_TYPES } from '../../model/enums.js';
import type { AskAnswer } from '../../model/permission-ask.js';
import { ASK_ANSWERS } from '../../model/enums.js';
import { parseList, parsePriority } from '../todo/options.js';
import type {
  AbandonOptions,
  AnswerOptions,
  DiffOptions,
  DoOptions,
  LandOptions,
  ListOptions,
  LogsOptions,
  RetryOptions,
  ShowOptions,
} from './options.js';

export function jobCommand(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === 'job') ??
    program.command('job').description('run and inspect jobs')
  );
}

export function registerJobCommands(program: Command): void {
  const job = jobCommand(program);
  const actions = () => import('./list-show.js');

  job
    .command('list')
    .description(
      'list jobs of this repository: active ones, and completed ones an ii run --land has yet to land (all jobs with --all, or by --status)',
    )
    .option(
      '--status <status>',
      `only jobs with this status (${JOB_STATUSES.join(', ')}; any case), or waiting: active jobs waiting for your answer (ii job answer)`,
    )
    .option('--all', 'include finished jobs')
    .option('--json', 'print JSON')
    .action(async (o: ListOptions) => (await actions()).jobList(o));

  job
    .command('show')
    .description('show a job: its stage, feedback, agent sessions and change history')
    .argument('<job>', 'job id or any unique prefix')
    .option('--json', 'print JSON')
    .action(async (id: string, o: ShowOptions) => (await actions()).jobShow(id, o));
}

/**
 * ii job logs: every agent transcript of a job, in the order the sessions
 * started, each under a header naming its purpose and id and followed by the
 * events logged after it (tests, verdict, commit).
 */
export function registerJobLogsCommand(program: Command): void {
  jobCommand(program)
    .command('logs')
    .description(
      'every agent transcript of a job in order, with a header per agent session and what the job recorded after it',
    )
    .argument('<job>', 'job id or any unique prefix')
    .option(
      '--json',
      'each recorded transcript line as JSON, tagged with its agent session (secrets redacted)',
    )
    .option(
      '--tests',
      'only the test runs, each with its whole output (redacted, control characters escaped)',
    )
    .option(
      '-f, --follow',
      "then a running job's new lines as they come, until it ends (from the shared store for a job of another machine)",
    )
    .action(async (id: string, o: LogsOptions) => (await import('./logs.js')).jobLogs(id, o));
}

const BASELINE_HELP =
  'go on when the tests already fail on the untouched base (normally the job stops before any agent turn); the review is told which were failing';

/** ii job do | retry | abandon | diff: the commands that start, stop and compare jobs. */
export function registerJobRunCommands(program: Command): void {
  const job = jobCommand(program);

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
    .option(
      '--rev <rev>',
      "base revision for the workspace (default: the branch checked out here, never a remote's)",
    )
    .option(
      '--agent <name|path>',
      'agent preset (opencode, claude, gemini, codex, scripted) or a command path',
    )
    .option(
      '--auto-commit [bool]',
      'ask the agent to commit its own work after each implement pass (true|false)',
    )
    .option('--allow-failing-baseline', BASELINE_HELP)
    // What ii run starts for each todo; not for people, so not in --help.
    .addOption(new Option('--backlog').hideHelp())
    // ii run's standby runner: loaded and waiting for its todo id on stdin.
    .addOption(new Option('--standby').hideHelp())
    // …which says on fd 3 that its job ended and it waits for another.
    .addOption(new Option('--back').hideHelp())
    // ii run --land's runners: the job is recorded as to land, with its claim.
    .addOption(new Option('--to-land').hideHelp())
    // ii run's runners started together: the job's start at the lowest priority (bootLow).
    .addOption(new Option('--boot-low').hideHelp())
    .action(async (id: string | undefined, o: DoOptions) => (await import('./do.js')).jobDo(id, o));

  job
    .command('retry')
    .description(
      "a new job for the same todo as a finished one (the old job's history is kept), run in the foreground",
    )
    .argument('<job>', 'job id or any unique prefix')
    .option('--agent <name|path>', 'agent preset or command path for the new job')
    .option(
      '--rev <rev>',
      "base revision for the new workspace (default: the branch checked out here, never a remote's)",
    )
    .option('--allow-failing-baseline', BASELINE_HELP)
    .action(async (id: string, o: RetryOptions) => (await import('./retry.js')).jobRetry(id, o));

  job
    .command('abandon')
    .description(
      'stop a running job: its runner is asked to stop (within 2 s); a job whose runner is gone is cleaned up directly',
    )
    .argument('<job>', 'job id or any unique prefix')
    .option('--reason <text>', 'why (recorded on the job)')
    .option('--wait', 'wait until the runner has stopped the job')
    .action(async (id: string, o: AbandonOptions) => (await import('./abandon.js')).jobAbandon(id, o));

  job
    .command('answer')
    .description(
      'answer the permission request a job is waiting on ([agent] permissions = "ask" or "ask-commands"; ii job list shows it as waiting, ii job show shows the question): ' +
        'allow runs it once; allow-always runs it and, for the rest of this job, lets through without asking every request of the same tool kind ' +
        '(for a command: every command starting with the same first two words, e.g. "npm test …", and running nothing more through the shell; a command that runs its arguments, such as bash -c, env, sudo or node -e, only as a whole); ' +
        'outside the workspace stays refused. reject refuses it (the note tells the agent why) and the job goes on. ' +
        "The job's runner replies to the agent within a second",
    )
    .argument('<job>', 'job id or any unique prefix')
    .addArgument(new Argument('<answer>', 'the answer').choices(ASK_ANSWERS))
    .option(
      '--note <text>',
      'a note sent back to the agent with the answer (why you rejected it, what to do instead)',
    )
    .option(
      '--ask <n>',
      'answer request n only (ii job show gives its number): refused if it is no longer open, so a request that timed out and was asked again is never answered with what was meant for the earlier one',
      (v: string) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a request number, e.g. --ask 3');
        return n;
      },
    )
    .action(async (id: string, answer: AskAnswer, o: AnswerOptions) =>
      (await import('./answer.js')).jobAnswer(id, answer, o),
    );

  job
    .command('land')
    .description(
      "put a completed job's commits on a branch: rebased onto its tip as it is now (messages and Change-Ids kept), " +
        'tested there, and the branch moved only if nobody moved it meanwhile (else rebased and tested again); ' +
        'where the branch is checked out its files are updated only as git merge --ff-only does, never over uncommitted changes. ' +
        'A conflict is handed to the agent, or with [land] on-conflict = "stop" left rebase-in-progress for you: resolve it, git add, then --continue (or --abort)',
    )
    .argument('<job>', 'job id or any unique prefix')
    .option(
      '--onto <branch>',
      'the branch to land on (default: [land] onto, else the branch the job started from)',
    )
    .option('--no-test', 'land without running the test commands on the rebased tip (recorded as untested)')
    .option('--json', 'print the landed job as JSON')
    .option(
      '--stop-on-conflict',
      'on a conflict, stop rebase-in-progress for you to resolve (as [land] on-conflict = "stop")',
    )
    .option(
      '--continue',
      'go on with a landing stopped in a conflict, once you resolved and git added the files',
    )
    .option('--abort', 'undo a landing stopped in a conflict: the job is back to completed, not landed')
    .action(async (id: string, o: LandOptions) => (await import('./land.js')).jobLand(id, o));

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
      '--from <c.i|id>',
      "compare two iterations, any pair, across changes too: the earlier one, as change.iteration (e.g. 1.1) or the iteration's id (ii job show lists them; a unique prefix of 4 or more will do)",
    )
    .option('--to <c.i|id>', 'the other iteration of the pair, either way (default: the last one)')
    .option(
      '--recompute',
      'compute the summary line again from git and the snapshots instead of reading the one stored when the iteration ended (a pair of iterations, or one recorded before summaries were stored, is always computed)',
    )
    .option(
      '--json',
      'the iteration diff as JSON (the capped code diff as a string, diff_complete false when something was left out)',
    )
    .action(async (id: string, o: DiffOptions) => (await import('./diff.js')).jobDiff(id, o));
}
