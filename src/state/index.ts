// Opens the state store of record: SQLite in the state dir.
import type { StateStore } from './api.js';
import { dbFile, stateDir } from './paths.js';
import { freeReserve, keepReserve } from './reserve.js';
import { openDatabase, type OpenOptions } from './sqlite/db.js';
import { GuardedConnection } from './sqlite/guard.js';
import { sqliteAskStore } from './sqlite/asks.js';
import { sqliteJobStore } from './sqlite/jobs.js';
import { sqliteJobLogStore } from './sqlite/logs.js';
import {
  sqliteControlStore,
  sqliteProcessGroupStore,
  sqliteRunnerStore,
  sqliteSessionStore,
  sqliteWorkspaceStore,
} from './sqlite/small-stores.js';
import { sqliteTodoStore } from './sqlite/todos.js';

export type { StateStore } from './api.js';
export { dbFile, repoSlug, stateDir, transcriptFile } from './paths.js';
export { checkHeader as checkStoreHeader } from './sqlite/db.js';
export { damageAdvice, inspectStoreFile, type StoreInspection } from './sqlite/damage.js';

/**
 * Every call into the returned store goes through one guard (sqlite/guard.ts):
 * SQLite finding the file damaged, at any call, ends in StoreDamagedError
 * (exit 3) with nothing more written to the file.
 */
export function openStateStore(
  opts: OpenOptions & {
    dir?: string;
    /** Keep space for the end of a job on a full disk (the commands that run jobs: state/reserve.ts). */
    reserve?: boolean;
  } = {},
): StateStore {
  const dir = opts.dir ?? stateDir();
  const dbPath = dbFile(dir);
  const db = openDatabase(dbPath, opts);
  if (opts.reserve) keepReserve(dbPath);
  const guard = new GuardedConnection(db, dbPath);
  // Preparing the stores' statements reads the schema pages: guarded too.
  const stores = guard.run(() => ({
    todos: sqliteTodoStore(db),
    jobs: sqliteJobStore(db),
    control: sqliteControlStore(db),
    asks: sqliteAskStore(db),
    sessions: sqliteSessionStore(db),
    workspaces: sqliteWorkspaceStore(db),
    processGroups: sqliteProcessGroupStore(db),
    runners: sqliteRunnerStore(db),
    logs: sqliteJobLogStore(db),
  }));
  return {
    dir,
    dbPath,
    todos: guard.wrap(stores.todos),
    jobs: guard.wrap(stores.jobs),
    control: guard.wrap(stores.control),
    asks: guard.wrap(stores.asks),
    sessions: guard.wrap(stores.sessions),
    workspaces: guard.wrap(stores.workspaces),
    processGroups: guard.wrap(stores.processGroups),
    runners: guard.wrap(stores.runners),
    logs: guard.wrap(stores.logs),
    freeReserve: () => freeReserve(dbPath),
    close: () => guard.close(),
  };
}
