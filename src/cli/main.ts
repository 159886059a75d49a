// Entry point of the `ii` command: builds the commander program from one
// file per command group and maps errors to exit codes.
import { Command, CommanderError } from 'commander';
import { UserError } from '../errors.js';
import { visibleText } from '../text/sanitize.js';
import { defaultArgv, registerDashboardCommand } from './dashboard.js';
import { registerDoctorCommand } from './doctor.js';
import { registerHelpCommand } from './help.js';
import { registerInitCommand } from './init.js';
import { registerJobCommands } from './job.js';
import { registerJournalCommands } from './journal.js';
import { registerJobLogsCommand } from './job-logs.js';
import { registerJobRunCommands } from './job-run.js';
import { guardOutput } from './output.js';
import { registerDemoCommand } from './demo.js';
import { registerTodoCommands } from './todo.js';
import { registerWorkspaceCommands } from './workspace.js';

/** Exit codes (documented in the README). */
export const EXIT = { ok: 0, failed: 1, usage: 2, internal: 3 } as const;

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
  registerDemoCommand(program);
  registerInitCommand(program);
  registerDashboardCommand(program);
  registerDoctorCommand(program);
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
  if (err instanceof UserError) {
    // A message may quote a name or a line an agent wrote.
    process.stderr.write(`ii: ${visibleText(err.message)}\n`);
    return err.exitCode;
  }
  process.stderr.write(
    `ii: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  return EXIT.internal;
}
