// ii init: writes a commented incrementum.toml for the current repository.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../errors.js';
import { configTemplate } from '../init/config-template.js';
import { guessTestCommands } from '../init/guess-tests.js';
import { currentRepo } from './context.js';

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
    .action((o: { agent: string; force?: boolean; print?: boolean }) => {
      const { root } = currentRepo();
      const tests = guessTestCommands(root);
      const text = configTemplate({ testCommands: tests, agent: o.agent });
      if (o.print) {
        process.stdout.write(text);
        return;
      }
      const path = join(root, 'incrementum.toml');
      const other = join(root, '.incrementum', 'config.toml');
      if (existsSync(path) && !o.force)
        throw new UserError(
          `${path} already exists; it was left as it is. Use --force to replace it, or --print to see the template.`,
        );
      if (existsSync(other) && !o.force)
        throw new UserError(
          `${other} already configures this repository; incrementum.toml would take its place. Use --force if that is what you want.`,
        );
      writeFileSync(path, text);
      process.stdout.write(`Wrote ${path}\n`);
      process.stdout.write(
        tests.length > 0
          ? `Test commands: ${tests.join(', ')}\n`
          : 'No test command could be guessed: set [job] test-commands before running a job.\n',
      );
    });
}
