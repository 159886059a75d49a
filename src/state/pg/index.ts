// Opens the store of record on PostgreSQL, behind the asynchronous API
// (async-api.ts): connects, checks the schema version (a database newer than
// this build is refused, untouched) and applies the migrations it lacks.
// The commands reach it through withStore (cli/context.ts) and
// openAsyncStateStore (open-async.ts) when II_DATABASE_URL is set.
import type { AsyncStateStore } from '../async-api.js';
import { stateDir } from '../paths.js';
import { pgPermissionAskStore } from './asks.js';
import { pgBoardRead } from './board-read.js';
import { PgDb } from './db.js';
import { pgJobStore } from './jobs.js';
import { pgJobLogStore, watchJobLogs } from './logs.js';
import {
  pgControlStore,
  pgProcessGroupStore,
  pgRunnerStore,
  pgSessionStore,
  pgWorkspaceStore,
} from './small-stores.js';
import { pgTodoStore } from './todos.js';

export async function openPgStore(url: string, opts: { dir?: string } = {}): Promise<AsyncStateStore> {
  const db = new PgDb(url);
  try {
    await db.migrate();
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  const stops: Promise<() => Promise<void>>[] = [];
  return {
    driver: 'postgres',
    dir: opts.dir ?? stateDir(),
    location: db.location,
    todos: pgTodoStore(db),
    jobs: pgJobStore(db),
    control: pgControlStore(db),
    asks: pgPermissionAskStore(db),
    sessions: pgSessionStore(db),
    workspaces: pgWorkspaceStore(db),
    processGroups: pgProcessGroupStore(db),
    runners: pgRunnerStore(db),
    logs: pgJobLogStore(db),
    readBoard: pgBoardRead(db),
    watchLogs: (onAppend) => {
      const stop = watchJobLogs(db, onAppend);
      stops.push(stop);
      return stop;
    },
    watch: (onVersion) => {
      const stop = db.listen(onVersion);
      stops.push(stop);
      return stop;
    },
    close: async () => {
      for (const stop of stops.splice(0)) await (await stop.catch(() => null))?.();
      await db.close();
    },
  };
}
