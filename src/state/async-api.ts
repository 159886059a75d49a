// The store's asynchronous surface: the same stores as api.ts, each method
// giving a Promise, so a driver that talks to a server (PostgreSQL,
// pg/index.ts) and the embedded SQLite one (sync-adapter.ts) sit behind one
// API. The types are made from api.ts, so the two cannot drift apart: a
// method added there is owed by every driver here. Callbacks a method takes
// (a claim's check, a workspace's busy test) stay synchronous: a driver calls
// them inside its transaction, on what it has read.
import type { JobBrief } from '../model/backlog.js';
import type { BacklogRunnerRecord } from '../model/backlog-runner.js';
import type { Job } from '../model/job.js';
import type { Todo } from '../model/todo.js';
import type {
  ControlStore,
  JobLogStore,
  JobStore,
  PermissionAskStore,
  ProcessGroupStore,
  RunnerStore,
  SessionStore,
  TodoStore,
  WorkspaceStore,
} from './api.js';

/** Store `T` with every method giving a Promise of what it gives. */
export type Promised<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : T[K];
};

export type AsyncTodoStore = Promised<TodoStore>;
export type AsyncJobStore = Promised<JobStore>;
export type AsyncControlStore = Promised<ControlStore>;
export type AsyncPermissionAskStore = Promised<PermissionAskStore>;
export type AsyncSessionStore = Promised<SessionStore>;
export type AsyncWorkspaceStore = Promised<WorkspaceStore>;
export type AsyncProcessGroupStore = Promised<ProcessGroupStore>;
export type AsyncRunnerStore = Promised<RunnerStore>;
export type AsyncJobLogStore = Promised<JobLogStore>;

export interface AsyncStateStore {
  readonly driver: 'sqlite' | 'postgres';
  /** The local state folder: event logs, transcripts and journals stay files there. */
  readonly dir: string;
  /** Where the store of record is, as it may be shown: the SQLite file, or the URL with its password redacted. */
  readonly location: string;
  todos: AsyncTodoStore;
  jobs: AsyncJobStore;
  control: AsyncControlStore;
  asks: AsyncPermissionAskStore;
  sessions: AsyncSessionStore;
  workspaces: AsyncWorkspaceStore;
  processGroups: AsyncProcessGroupStore;
  runners: AsyncRunnerStore;
  /** Each job's events and transcripts as lines (written there when the store is shared: state/log-shipper.ts). */
  logs: AsyncJobLogStore;
  /**
   * PostgreSQL only: calls `onAppend` with a job and its last seq as lines
   * are appended to its log, by any process on any machine, and with null
   * after a lost connection comes back (read every followed job again from
   * the last seq seen). Resolves to the function that stops it.
   */
  watchLogs?(onAppend: (jobId: string | null, seq: number) => void): Promise<() => Promise<void>>;
  /**
   * PostgreSQL only (SQLite's readers look at the file): calls `onVersion`
   * with each store version as it is committed, by any process on any
   * machine, and again with the current one after a lost connection comes
   * back; read JobStore.listChangedAfter / TodoStore.listChangedAfter from
   * the last version seen. Resolves to the function that stops it.
   */
  watch?(onVersion: (version: number) => void): Promise<() => Promise<void>>;
  /**
   * PostgreSQL only: what a board's copy of the store (dashboard/io/board-source.ts)
   * reads, in one round trip: the version, then what was written after
   * `after` (-1: everything) in the scope (`repo`, or null for every
   * repository). Read from the version on: what a row holds may be newer
   * than it, and is then read again after the next.
   */
  readBoard?(repo: string | null, after: number, wholeBriefs: boolean): Promise<BoardRead>;
  /**
   * SQLite only (state/reserve.ts): frees the space kept beside the database
   * so the end of a job can be recorded on a full disk; true when there was
   * some to free. A server's disk is the server's: PostgreSQL has none.
   */
  freeReserve?(): boolean;
  close(): Promise<void>;
}

/** AsyncStateStore.readBoard's answer. */
export interface BoardRead {
  /** The store's version, read before the rest. */
  version: number;
  /** The scope's jobs written after the version asked for, newest first. */
  jobs: Job[];
  /** The repository's todos written after it; with no repository, the todos of the jobs read. */
  todos: Todo[];
  /** The repository's job briefs, all of them (wholeBriefs) or those of the jobs written after it; null with no repository. */
  briefs: JobBrief[] | null;
  /** The repository's backlog runners; null with no repository. */
  runners: BacklogRunnerRecord[] | null;
}
