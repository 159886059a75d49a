// ii doctor: checks the machine, the state and the configured agent, and says what to fix.
import type { Command } from 'commander';

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check Node, git, the state dir, the config and the agent, and say what to fix')
    .option('--json', 'print JSON')
    .option('--agent <name|path>', 'check this agent instead of the configured one')
    .action(async (o: { json?: boolean; agent?: string }) => (await import('./doctor-actions.js')).doctor(o));
}
