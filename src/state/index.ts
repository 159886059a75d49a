// Opens the state store of record: SQLite in the state dir.
import type { StateStore } from './api.js';
import { dbFile, stateDir } from './paths.js';
import { openDatabase, type OpenOptions } from './sqlite/db.js';
import { sqliteJobStore } from './sqlite/jobs.js';
import {
  sqliteControlStore,
  sqliteProcessGroupStore,
  sqliteSessionStore,
  sqliteWorkspaceStore,
} from './sqlite/small-stores.js';
import { sqliteTodoStore } from './sqlite/todos.js';

export type { StateStore } from './api.js';
export { dbFile, eventsFile, jobDir, repoSlug, stateDir, transcriptFile, workspacesDir } from './paths.js';

export function openStateStore(opts: OpenOptions & { dir?: string } = {}): StateStore {
  const dir = opts.dir ?? stateDir();
  const dbPath = dbFile(dir);
  const db = openDatabase(dbPath, opts);
  return {
    dir,
    dbPath,
    todos: sqliteTodoStore(db),
    jobs: sqliteJobStore(db),
    control: sqliteControlStore(db),
    sessions: sqliteSessionStore(db),
    workspaces: sqliteWorkspaceStore(db),
    processGroups: sqliteProcessGroupStore(db),
    close: () => db.close(),
  };
}
