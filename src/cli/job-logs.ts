// ii job logs: every agent transcript of a job, in the order the sessions
// started, each under a header naming its purpose and id and followed by the
// events logged after it (tests, verdict, commit). The body is in
// job-logs-actions.ts, imported when the command runs.
import type { Command } from 'commander';
import { jobCommand } from './job.js';

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
    .action(async (id: string, o: { json?: boolean; tests?: boolean }) =>
      (await import('./job-logs-actions.js')).jobLogs(id, o),
    );
}
