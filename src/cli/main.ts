// Entry point of the `ii` command: builds the commander program from one
// folder per command group (its index.ts) and maps errors to exit codes.
import { Command, CommanderError } from 'commander';
import { defaultArgv, registerDashboardCommand } from './dashboard/index.js';
import { registerDoctorCommand } from './doctor/index.js';
import { registerHelpCommand } from './help/index.js';
import { registerInitCommand } from './init/index.js';
import { registerJobCommands, registerJobLogsCommand, registerJobRunCommands } from './job/index.js';
import { registerJournalCommands } from './journal/index.js';
import { EXIT, reportError } from './exit.js';
import { guardOutput } from './output.js';
import { registerDemoCommand } from './demo/index.js';
import { registerRunCommand } from './run/index.js';
import { registerStateCommands } from './state/index.js';
import { registerTodoCommands } from './todo/index.js';
import { registerWorkspaceCommands } from './workspace/index.js';

export { EXIT } from './exit.js';

export function buildProgram(): Command {
  const program = new Command('ii')
    .description('incrementum: run AI coding agents on todos as jobs, and watch them live.')
    .version('0.1.0', '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerTodoCommands(program);
  registerJobCommands(program);
  registerJournalCommands(program);
  registerJobLogsCommand(program);
  registerWorkspaceCommands(program);
  registerJobRunCommands(program);
  registerRunCommand(program);
  registerDemoCommand(program);
  registerInitCommand(program);
  registerDashboardCommand(program);
  registerDoctorCommand(program);
  registerStateCommands(program);
  registerHelpCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  guardOutput();
  const program = buildProgram();
  try {
    await program.parseAsync(defaultArgv(argv));
  } catch (err) {
    process.exitCode = exitCodeFor(err);
  }
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // --help and --version arrive here as "errors" with exit code 0.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  return reportError(err);
}
