// ii doctor: checks the machine, the state and the configured agent, and says what to fix.
import type { Command } from 'commander';
import type { DoctorOptions } from './options.js';

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      "check Node, git, the state dir, the repository, your git identity, the config, the prompt templates and the agent (and, with II_DATABASE_URL or [state] url, the PostgreSQL store's connection and schema version and the remote the machines share), and say what to fix",
    )
    .option('--json', 'print JSON')
    .option('--agent <name|path>', 'check this agent instead of the configured one')
    .option(
      '--tests',
      'also run [workspace] setup and the test commands in a scratch workspace of the base revision, as a job would before its first prompt',
    )
    .action(async (o: DoctorOptions) => (await import('./actions.js')).doctor(o));
}
