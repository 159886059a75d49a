// ii job list | show  (the runner's commands join this group in job-run.ts)
import { Command } from 'commander';
import { JobStatus, type Job } from '../model/job.js';
import { UserError } from '../errors.js';
import { currentRepo, withStore } from './context.js';
import { printJson, style } from './format.js';
import { jobDetail, jobListTable } from './job-view.js';

export function jobCommand(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === 'job') ??
    program.command('job').description('run and inspect jobs')
  );
}

export function registerJobCommands(program: Command): void {
  const job = jobCommand(program);

  job
    .command('list')
    .description('list jobs of this repository (active ones unless --all or --status)')
    .option('--status <status>', `only jobs with this status (${JobStatus.options.join(', ')}; any case)`)
    .option('--all', 'include finished jobs')
    .option('--json', 'print JSON')
    .action(async (o: { status?: string; all?: boolean; json?: boolean }) => {
      let status: Job['status'] | undefined;
      if (o.status) {
        const parsed = JobStatus.safeParse(o.status.toLowerCase());
        if (!parsed.success)
          throw new UserError(`unknown status "${o.status}": use one of ${JobStatus.options.join(', ')}`);
        status = parsed.data;
      }
      const { slug } = currentRepo();
      const { jobs, total, todos } = await withStore((s) => {
        const all = s.jobs.list(slug);
        const jobs = status
          ? all.filter((j) => j.status === status)
          : o.all
            ? all
            : all.filter((j) => j.status === 'active');
        return { jobs, total: all.length, todos: new Map(s.todos.list(slug).map((t) => [t.id, t])) };
      });
      if (o.json) return printJson(jobs);
      if (jobs.length === 0) {
        const hint =
          total > 0 && !o.all ? ` (${total} finished job${total === 1 ? '' : 's'}: ii job list --all)` : '';
        process.stdout.write(`No ${status ?? 'active'} jobs${hint}.\n`);
        return;
      }
      process.stdout.write(jobListTable(jobs, todos, style()) + '\n');
    });

  job
    .command('show')
    .description('show a job: its stage, feedback, agent sessions and change history')
    .argument('<job>', 'job id or any unique prefix')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const { slug } = currentRepo();
      const { job, todo } = await withStore((s) => {
        const job = s.jobs.resolve(slug, id);
        return { job, todo: s.todos.get(slug, job.todo_id) };
      });
      if (o.json) return printJson(job);
      process.stdout.write(jobDetail(job, todo, style()) + '\n');
    });
}
