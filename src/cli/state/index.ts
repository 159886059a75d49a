// ii state migrate: definitions only; the body is in migrate.ts, imported when it runs.
import type { Command } from 'commander';
import type { StateMigrateOptions } from './options.js';

export function registerStateCommands(program: Command): void {
  const state = program
    .command('state')
    .description(
      'the store of record: the local SQLite file, or a shared PostgreSQL (II_DATABASE_URL or [state] url)',
    );
  state
    .command('migrate')
    .description(
      "copy the whole store between the local SQLite file and a PostgreSQL database: into an empty store, in one transaction, checked by counting every table; the source is never changed or deleted. Repositories are renamed on the way (SQLite names a repository by its clone's path, PostgreSQL by [state] project or its remote's URL) when their clone is found on this machine: the current repository, and any whose workspaces are still here; the others keep their names, and the output lists them",
    )
    .requiredOption(
      '--to <target>',
      'postgres://… (or `postgres`: the URL in II_DATABASE_URL or [state] url) to copy the local SQLite store there; `sqlite` to copy the configured PostgreSQL store into the local SQLite file',
    )
    .option(
      '--from <url>',
      'with --to sqlite: the PostgreSQL store to copy from (default: the configured one)',
    )
    .option('--json', 'print JSON: rows copied per table, repositories renamed and kept')
    .action(async (o: StateMigrateOptions) => (await import('./migrate.js')).stateMigrate(o));
}
