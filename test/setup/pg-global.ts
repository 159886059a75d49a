// vitest globalSetup: one private PostgreSQL server for the whole run
// (test/helpers/pg-server.ts), stopped at its end; each suite that needs it
// makes its own database in it (test/helpers/pg.ts). Starting it takes about
// a second (initdb included), once per run rather than once per file.
//
// In CI (CI=true) a server that cannot start fails the run, loudly: the
// PostgreSQL tests must never skip there unseen. Elsewhere, without the
// binaries, they skip, saying why; II_TEST_PG=off skips them on purpose.
import type { TestProject } from 'vitest/node';
import { startPgServer, type PgServer, type PgServerInfo } from '../helpers/pg-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pg: PgServerInfo | null;
    pgWhyNot: string;
  }
}

let server: PgServer | null = null;

export async function setup(project: TestProject): Promise<void> {
  const ci = process.env.CI === 'true' || process.env.CI === '1';
  if (!ci && process.env.II_TEST_PG === 'off') {
    project.provide('pg', null);
    project.provide('pgWhyNot', 'II_TEST_PG=off');
    return;
  }
  try {
    server = await startPgServer();
  } catch (err) {
    if (ci)
      throw new Error(
        `CI: the private PostgreSQL server for the tests could not start: ${(err as Error).message}`,
        { cause: err },
      );
    project.provide('pg', null);
    project.provide('pgWhyNot', (err as Error).message.split('\n')[0] ?? 'it did not start');
    return;
  }
  const { stop: _stop, ...info } = server;
  project.provide('pg', info);
  project.provide('pgWhyNot', '');
}

export async function teardown(): Promise<void> {
  await server?.stop();
  server = null;
}
