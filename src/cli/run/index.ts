// `ii run`: registration only; the body (run.ts) is imported when it runs.
import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_RUN_NICE, NICE_HELP, parseNice } from '../../model/nice.js';
import type { RunOptions } from './options.js';

const positive = (what: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`${what} is a whole number of at least 1.`);
  return n;
};

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description(
      'run the backlog: a job for each ready todo (ii todo list --ready), in run order, at most N at once; each job runs in a background runner of its own (one that has finished a job may take the next), so stopping ii run never stops a job',
    )
    .option(
      '--jobs <N>',
      'jobs of this repository running at once on this machine, counting ones started otherwise here (ii job do, another ii run); on a shared store each machine has its own (default: [run] jobs, else 2)',
      positive('--jobs'),
    )
    .option(
      '--agent <name|path>',
      'agent preset (opencode, claude, gemini, codex, scripted) or a command path, for every job',
    )
    .option(
      '--watch',
      'keep running when nothing is ready, starting todos as they become ready (Ctrl-C stops)',
    )
    .option('--max-jobs <M>', 'start at most M jobs, then wait for them and stop', positive('--max-jobs'))
    .option(
      '--rev <rev>',
      "base revision for every job, as ii job do --rev (default: the branch checked out here, never a remote's)",
    )
    .option(
      '--nice <N>',
      `how far below yours its jobs' CPU priority is, 0 to 19: each runner, with its agent, tests and git, starts at nice +N (default: [run] nice, else ${DEFAULT_RUN_NICE}; 0: at yours)`,
      (v: string) => {
        const n = parseNice(v);
        if (n === null) throw new InvalidArgumentError(`--nice ${NICE_HELP}.`);
        return n;
      },
    )
    .option(
      '--land',
      'land each completed job as it finishes (as ii job land does), one at a time in completion order: a merge queue; first the jobs an earlier --land run left to land (it was killed)',
    )
    .addHelpText(
      'after',
      `
Each job starts from the branch checked out here when ii run starts (never a
remote's branch), at its tip when the job starts.
Without --watch it returns once nothing is ready and nothing runs. Exit 0 when
every job it started completed (and, with --land, landed); 1 when any failed,
was abandoned or could not start. Ctrl-C stops starting jobs and says which
still run (watch them with ii dashboard, stop one with ii job abandon <job>);
a second Ctrl-C abandons them. A todo whose jobs failed [run] max-attempts
times (default 2) waits for ii todo reopen.

Its jobs run at a lower CPU priority than yours (--nice): when the cores are
busy, your board, editor and shell come first and the jobs take what is
left; on an idle machine they run as fast as before. Jobs started together
with no runner waiting on standby start at the lowest priority, until their
agents' first prompts or for 3 s at most.

With --land each job is recorded as "to land" when it starts, so one whose
ii run --land was killed is not lost: the next ii run --land lands those
first, oldest completion first, then its own (ii job list shows them). A run
without --land lands nothing, theirs included: the intent is the job's, but
only a landing run acts on it. A job whose landing was refused stays to land
with the refusal shown (ii job show) and is not tried again by a run: ii job
land <job> tries again.`,
    )
    .action(async (o: RunOptions) => (await import('./run.js')).runBacklog(o));
}
