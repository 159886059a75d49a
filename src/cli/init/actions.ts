// The body of ii init (definition in index.ts).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../errors.js';
import { configTemplate } from '../../init/config-template.js';
import { guessProject } from '../../init/guess.js';
import { GitVcs } from '../../vcs/git.js';
import { currentRepo } from '../context.js';
import type { InitOptions } from './options.js';

export async function init(o: InitOptions): Promise<void> {
  const { root } = currentRepo();
  const guess = await guessProject(new GitVcs(), root);
  const { tests, setup } = guess;
  const text = configTemplate({ testCommands: tests.map((t) => t.command), setup, agent: o.agent });
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
      ? `Test commands: ${tests.map((t) => `${t.command} (${t.reason})`).join(', ')}\n`
      : 'No test command could be guessed: set [job] test-commands before running a job.\n',
  );
  // Why each setup command was guessed, and any lockfile here it was not guessed from.
  if (setup.length > 0 || guess.leftOut.length > 0)
    process.stdout.write(
      `Workspace setup (from ${guess.from}):\n` +
        (setup.length ? setup.map((s) => `  ${s.command}: ${s.reason}\n`).join('') : '  none\n') +
        guess.leftOut.map((l) => `  ${l}\n`).join(''),
    );
}
