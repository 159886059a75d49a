// Opens the state store of record: SQLite in the state dir.
import type { DatabaseSync } from 'node:sqlite';
import type { StateStore } from './api.js';
import { withLazyStores, type StoreName } from './lazy-stores.js';
import { dbFile, stateDir } from './paths.js';
import { freeReserve, keepReserve } from './reserve.js';
import { openDatabase, type OpenOptions } from './sqlite/db.js';
import { GuardedConnection } from './sqlite/guard.js';
import { guardJobTexts, settleJobTexts } from './sqlite/job-json.js';
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

/** How each of the nine stores is made on the database. */
const SQLITE_STORES: { [K in StoreName]: (db: DatabaseSync) => StateStore[K] } = {
  todos: sqliteTodoStore,
  jobs: sqliteJobStore,
  control: sqliteControlStore,
  asks: sqliteAskStore,
  sessions: sqliteSessionStore,
  workspaces: sqliteWorkspaceStore,
  processGroups: sqliteProcessGroupStore,
  runners: sqliteRunnerStore,
  logs: sqliteJobLogStore,
};

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
  // The job texts a write leaves to be made shortly after (sqlite/job-json.ts) are made through the guard too.
  guardJobTexts(db, (make) => guard.run(make));
  // Each store is made on first use (lazy-stores.ts); preparing its
  // statements reads the schema pages: guarded, as every call is.
  return withLazyStores<Omit<StateStore, StoreName>, StateStore>(
    {
      dir,
      dbPath,
      freeReserve: () => freeReserve(dbPath),
      close: () => {
        // Before it closes: the texts of this connection's last writes, so a finished job's is kept.
        settleJobTexts(db);
        guard.close();
      },
    },
    (name) => guard.wrap(guard.run(() => SQLITE_STORES[name](db))),
  );
}
