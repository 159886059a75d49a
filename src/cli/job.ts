// ii job list | show: definitions only (the runner's commands join this group
// in job-run.ts); the bodies live in job-actions.ts, imported when one runs.
import type { Command } from 'commander';
import { JOB_STATUSES } from '../model/enums.js';

export function jobCommand(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === 'job') ??
    program.command('job').description('run and inspect jobs')
  );
}

export function registerJobCommands(program: Command): void {
  const job = jobCommand(program);
  const actions = () => import('./job-actions.js');

  job
    .command('list')
    .description('list jobs of this repository (active ones unless --all or --status)')
    .option('--status <status>', `only jobs with this status (${JOB_STATUSES.join(', ')}; any case)`)
    .option('--all', 'include finished jobs')
    .option('--json', 'print JSON')
    .action(async (o: { status?: string; all?: boolean; json?: boolean }) => (await actions()).jobList(o));

  job
    .command('show')
    .description('show a job: its stage, feedback, agent sessions and change history')
    .argument('<job>', 'job id or any unique prefix')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => (await actions()).jobShow(id, o));
}
