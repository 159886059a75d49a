// The body of ii init (definition in index.ts).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../errors.js';
import { configTemplate } from '../../init/config-template.js';
import { guessTestCommands } from '../../init/guess-tests.js';
import { detectPackageManagers } from '../../session/lockfiles.js';
import { currentRepo } from '../context.js';
import type { InitOptions } from './options.js';

export function init(o: InitOptions): void {
  const { root } = currentRepo();
  const tests = guessTestCommands(root);
  const setup = detectPackageManagers(root).map((m) => ({ command: m.setup, lockfile: m.lockfile }));
  const text = configTemplate({ testCommands: tests, setup, agent: o.agent });
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
  if (setup.length > 0)
    process.stdout.write(
      `Workspace setup: ${setup.map((s) => s.command).join(', ')} (from ${setup.map((s) => s.lockfile).join(', ')})\n`,
    );
}
