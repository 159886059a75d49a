// Opens the state store of record: SQLite in the state dir.
import type { StateStore } from './api.js';
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
  // Each store is made on first use: making one prepares statements, and a
  // command uses a few of the nine (ii job list --json: the jobs alone; making
  // all nine was ~1.4 ms of its start). Preparing reads the schema pages:
  // guarded, as every call is.
  const lazy = <T extends object>(make: () => T): (() => T) => {
    let store: T | undefined;
    return () => (store ??= guard.wrap(guard.run(make)));
  };
  const todos = lazy(() => sqliteTodoStore(db));
  const jobs = lazy(() => sqliteJobStore(db));
  const control = lazy(() => sqliteControlStore(db));
  const asks = lazy(() => sqliteAskStore(db));
  const sessions = lazy(() => sqliteSessionStore(db));
  const workspaces = lazy(() => sqliteWorkspaceStore(db));
  const processGroups = lazy(() => sqliteProcessGroupStore(db));
  const runners = lazy(() => sqliteRunnerStore(db));
  const logs = lazy(() => sqliteJobLogStore(db));
  return {
    dir,
    dbPath,
    get todos() {
      return todos();
    },
    get jobs() {
      return jobs();
    },
    get control() {
      return control();
    },
    get asks() {
      return asks();
    },
    get sessions() {
      return sessions();
    },
    get workspaces() {
      return workspaces();
    },
    get processGroups() {
      return processGroups();
    },
    get runners() {
      return runners();
    },
    get logs() {
      return logs();
    },
    freeReserve: () => freeReserve(dbPath),
    close: () => {
      // Before it closes: the texts of this connection's last writes, so a finished job's is kept.
      settleJobTexts(db);
      guard.close();
    },
  };
}
