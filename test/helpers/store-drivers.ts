// The store's two drivers behind the asynchronous API, for suites that run
// against both: SQLite in a temp dir, PostgreSQL in a fresh database of the
// run's private server (skipped, saying why, where there is none; never in CI).
import { join } from 'node:path';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { openStateStore } from '../../src/state/index.js';
import { openPgStore } from '../../src/state/pg/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { dropDatabase, freshDatabase, pgServer, pgWhyNot, socketUrl } from './pg.js';
import { tempDir } from './tmp.js';

export interface DriverFixture {
  /** Another connection to the same store (another process, another machine). */
  connect(): Promise<AsyncStateStore>;
  /** Closes every connection made and removes the store. */
  cleanup(): Promise<void>;
}

export interface Driver {
  name: 'sqlite' | 'postgres';
  /** Why it cannot run here, or null. */
  skip: string | null;
  make(): Promise<DriverFixture>;
}

function tracked(open: () => Promise<AsyncStateStore>, after: () => Promise<void>): DriverFixture {
  const open_: AsyncStateStore[] = [];
  return {
    async connect() {
      const s = await open();
      open_.push(s);
      return s;
    },
    async cleanup() {
      for (const s of open_.splice(0)) await s.close();
      await after();
    },
  };
}

export const sqliteDriver: Driver = {
  name: 'sqlite',
  skip: null,
  async make() {
    const tmp = tempDir();
    const dir = join(tmp.path, 'incrementum');
    return tracked(
      async () => asyncStore(openStateStore({ dir })),
      async () => tmp.cleanup(),
    );
  },
};

/** This test file's migrated template database, made once (the server goes, with it, at the run's end). */
let template: Promise<string> | null = null;
const migratedTemplate = (s: NonNullable<ReturnType<typeof pgServer>>): Promise<string> =>
  (template ??= (async () => {
    const name = await freshDatabase(s, 'ii_tmpl');
    await (await openPgStore(socketUrl(s, name))).close();
    return name;
  })());

export const postgresDriver: Driver = {
  name: 'postgres',
  skip: pgServer() ? null : `no PostgreSQL server for the tests: ${pgWhyNot()}`,
  async make() {
    const s = pgServer()!;
    const tmp = tempDir();
    const name = await freshDatabase(s, 'ii_test', await migratedTemplate(s));
    const url = socketUrl(s, name);
    return tracked(
      () => openPgStore(url, { dir: join(tmp.path, 'incrementum') }),
      async () => {
        await dropDatabase(s, name);
        tmp.cleanup();
      },
    );
  },
};

export const DRIVERS: readonly Driver[] = [sqliteDriver, postgresDriver];
