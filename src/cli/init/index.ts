// ii init: writes a commented incrementum.toml for the current repository
// (the body is in actions.ts).
import type { Command } from 'commander';
import type { InitOptions } from './options.js';

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('write a commented incrementum.toml for this repository, guessing its test commands')
    .option(
      '--agent <preset>',
      'agent preset to configure (opencode, claude, gemini, codex, scripted)',
      'opencode',
    )
    .option('--force', 'replace an existing incrementum.toml')
    .option('--print', 'print the config instead of writing it')
    .action(async (o: InitOptions) => (await import('./actions.js')).init(o));
}
