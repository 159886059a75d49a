// The durable store's surface. Everything above src/state talks to this
// interface, never to SQL, so a PostgreSQL driver later is a new
// implementation of it, not a rewrite.
import type { BacklogRunnerRecord } from '../model/backlog-runner.js';
import type {
  AgentSessionRef,
  ControlKind,
  ControlRequest,
  FileChange,
  Job,
  JobChange,
  JobLanded,
  JobLandConflict,
  JobLanding,
  JobCommit,
  JobReview,
  JobStage,
  Session,
  SessionStatus,
  TestResult,
  Todo,
  TodoStatus,
  TodoType,
  Usage,
  Workspace,
  IterationSnapshot,
  ProcessGroup,
} from '../model/index.js';
import type { JobBrief } from '../model/backlog.js';
import type { JobCard } from '../model/job-card.js';
import type { AskOutcome, NewPermissionAsk, PermissionAsk } from '../model/permission-ask.js';

export interface NewTodo {
  title: string;
  description?: string;
  type?: TodoType;
  priority?: number;
  deps?: string[];
}

/** Fields `ii todo edit` changes; absent ones stay as they are. */
export type TodoPatch = Partial<NewTodo>;

export interface TodoStore {
  create(repo: string, input: NewTodo): Todo;
  /** Refuses an unknown dep and a dep cycle (naming it) with a UserError; changes nothing then. */
  update(repo: string, idOrPrefix: string, patch: TodoPatch): Todo;
  /**
   * Closed todos never run; refused while a job holds the todo, unless
   * `whileHeld` (abandoning that job and closing its todo: the job's end then
   * leaves it closed, where it reopens a todo still in progress).
   */
  close(repo: string, idOrPrefix: string, o?: { whileHeld?: boolean }): Todo;
  /** Open again with a fresh count of attempts ([run] max-attempts); refused while a job holds it. */
  reopen(repo: string, idOrPrefix: string): Todo;
  list(repo: string, filter?: { status?: TodoStatus }): Todo[];
  /** Exact id or any unique prefix; throws UserError listing candidates otherwise. */
  resolve(repo: string, idOrPrefix: string): Todo;
  get(repo: string, id: string): Todo | null;
  /**
   * `unlessClosed`: a closed todo stays closed (and is given back as it is),
   * decided in the write itself: a job's session start puts its todo in
   * progress, and a close that came first (abandon and close, while the
   * workspace was being made) must not be undone by it.
   */
  setStatus(repo: string, id: string, status: TodoStatus, o?: { unlessClosed?: boolean }): Todo;
  /**
   * The repo's todos created or changed by writes committed after store
   * version `after` (JobStore.version()): the board keeps its todos and reads
   * only these, not thousands of todos on every new one.
   */
  listChangedAfter(repo: string, after: number): Todo[];
  /** A cheap mark that changes whenever a todo of the repo is created or changed (the board polls it). */
  stamp(repo: string): string;
}

export interface NewJob {
  todo_id: string;
  session_id?: string | null;
  base_rev?: string | null;
  workspace_path?: string | null;
  auto_commit?: boolean;
  retried_from?: string | null;
  pid?: number | null;
  host?: string | null;
  /** Started by a landing runner (ii run --land): to land once completed (model/job.ts to_land). */
  to_land?: boolean;
}

/** A new iteration commit: the id is required, everything else has the model's defaults. */
export type NewCommit = Partial<JobCommit> & { commit_id: string };

/** Fields of the current commit the runner fills in as an iteration goes on. */
export interface CommitUpdate {
  commit_id?: string;
  iteration_commit_id?: string | null;
  draft_message?: string;
  tests_passed?: boolean | null;
  test_results?: TestResult[];
  review?: JobReview | null;
  files?: FileChange[];
  usage?: Usage;
  after?: IterationSnapshot | null;
  diff_summary?: string | null;
}

/** Which jobs of a repo list() and listJson() give. */
export interface JobListFilter {
  activeOnly?: boolean;
  status?: Job['status'];
  /** With activeOnly: the completed jobs still to land too. */
  toLand?: boolean;
}

export interface JobStore {
  create(repo: string, input: NewJob): Job;
  get(id: string): Job | null;
  /** Exact id or any unique prefix within the repo; UserError otherwise. */
  resolve(repo: string, idOrPrefix: string): Job;
  /**
   * Jobs of a repo, newest first; `activeOnly` keeps status=active, and with
   * `toLand` also the completed jobs still to land (model/derive.ts awaitsLanding).
   */
  list(repo: string, opts?: JobListFilter): Job[];
  /**
   * The JSON text of list(repo, opts), byte for byte JSON.stringify(list(repo, opts)),
   * written without making the Job objects (`ii job list --json` on thousands of jobs).
   */
  listJson(repo: string, opts?: JobListFilter): string;
  /**
   * listJson's text as `ii job list --json` prints it, as UTF-8: secrets
   * redacted and controls escaped (text/json.ts shownJsonText). The texts the
   * writers found clean are copied as stored, the others scanned.
   */
  listShown(repo: string, opts?: JobListFilter): Uint8Array;
  /**
   * listShown's bytes handed to `part` in order, a job's text at a time with
   * the brackets and commas between (PostgreSQL: all at once), so the
   * listing is written as it is read, never held whole. The bytes are lent
   * for the call only: `part` copies what it keeps (SQLite frees each job's
   * text once `part` returns).
   */
  eachShown(repo: string, opts: JobListFilter, part: (bytes: Uint8Array) => void): void;
  /**
   * The jobs of a repo (or of every repo, for null), newest first, as the
   * board lists them: their cards (model/job-card.ts), read without their
   * commits.
   */
  listCards(repo: string | null): JobCard[];
  /** Every job of every repo (dashboard, benchmarks). */
  listAll(opts?: { activeOnly?: boolean }): Job[];
  /**
   * Jobs (of a repo, or of every repo for null) written by a transaction
   * after store version `after` (see version()), heartbeats included: the
   * dashboard reloads only these.
   */
  listChangedAfter(after: number, repo?: string | null): Job[];
  // Mutators return what callers read, not the whole job reloaded: get() loads it.
  setStage(id: string, stage: JobStage): void;
  setFeedback(id: string, feedback: string | null): void;
  /** The local branch the job's base came from (where `ii job land` goes by default). */
  setBaseBranch(id: string, branch: string | null): void;
  /** Records that the job's commits were landed (ii job land); the job as it is now. */
  setLanded(id: string, landed: JobLanded): Job;
  /** A landing stopped in a conflict (or null: continued or aborted). */
  setLandConflict(id: string, conflict: JobLandConflict | null): void;
  /** A landing's progress or refusal for the board (or null); cleared by setLanded. */
  setLanding(id: string, landing: JobLanding | null): void;
  /** Completed jobs of a repo that are to land (to_land) and have not landed, newest first. */
  toLand(repo: string): Job[];
  /**
   * Records `landing` on the job, in one write transaction, unless it has
   * landed or another landing of it is under way (`live` says whether the
   * recorded one's process still runs): two processes never land one job.
   */
  takeLanding(
    id: string,
    landing: JobLanding,
    live: (current: JobLanding) => boolean,
  ): { ok: true } | { ok: false; landed: boolean; by: JobLanding | null };
  /** The job's session and workspace, and its base revision once the workspace has one. */
  setSession(id: string, session_id: string, workspace_path: string, base_rev?: string): void;
  /** The backlog's view of every job of a repo (model/backlog.ts), cheap enough to poll. */
  briefs(repo: string): JobBrief[];
  /**
   * The briefs of a repo's jobs written by a transaction after store version
   * `after` (see version()): with those read before, every brief as of now
   * (jobs are never deleted), at the cost of what changed, not of the history.
   */
  briefsChangedAfter(repo: string, after: number): JobBrief[];
  /**
   * Creates a job for input.todo_id and marks the todo in progress, in one
   * write transaction (BEGIN IMMEDIATE) that first asks `check` whether the
   * todo may still be claimed: two processes never get the same todo.
   * `check` is given the todo and its deps (not every todo of the repo) and
   * their jobs. Throws ClaimRefused (a UserError) with check's reason.
   */
  claim(repo: string, input: NewJob, check: (todos: Todo[], jobs: JobBrief[]) => string | null): Job;
  addAgentSession(id: string, ref: AgentSessionRef): void;
  /**
   * Records the usage an agent session reported over its whole life and adds
   * it to the job's total, in one transaction (call it once per session).
   */
  recordAgentUsage(id: string, agentSessionId: string, usage: Usage): void;
  appendChange(id: string, change_id: string): JobChange;
  /** The change id of every change any job (of any repo) records. */
  recordedChangeIds(): Set<string>;
  /** Appends an iteration commit to the job's current change. */
  appendCommit(id: string, commit: NewCommit): JobCommit;
  updateCurrentCommit(id: string, update: CommitUpdate): JobCommit;
  setProjectReview(id: string, review: JobReview): void;
  addUsage(id: string, usage: Usage): void;
  finish(id: string, status: 'completed' | 'failed' | 'abandoned', reason?: string | null): Job;
  /**
   * Finishes a job whose runner is gone, only while it is still active under
   * that runner (pid and host as the caller saw them): null when another
   * process ended it first or it runs again under another runner. Two
   * cleanups of one dead runner's job never both go on to reopen its todo.
   */
  finishOrphan(
    id: string,
    runner: { pid: number | null; host: string | null },
    status: 'failed' | 'abandoned',
    reason: string,
  ): Job | null;
  /**
   * Back to implementing, run by this process: a completed job goes on when
   * its landing conflicted (the agent resolves it). `sessionId`, when given,
   * is the session it is about to make (named before its workspace, as a claim does).
   */
  resume(id: string, pid: number, host: string, sessionId?: string): void;
  /**
   * The runner's sign of life: its pid and host, and (when given) its start
   * time in clock ticks (startTicks), which tells its pid apart from the
   * same number reused by a later process.
   */
  heartbeat(id: string, pid: number, host: string, startTicks?: number | null): void;
  /** The start ticks the job's runner last gave with its heartbeat, while it is about the pid the job names; null otherwise. */
  runnerStart(id: string): number | null;
  /**
   * The active jobs of a repo and their runners (pid, host): what a command
   * that meets dead runners checks (dead-runner.ts), without briefs()'
   * per-job commit counts (10 ms of `ii job list` at 1,000 jobs).
   */
  activeRunners(repo: string): Pick<JobBrief, 'id' | 'todo_id' | 'status' | 'pid' | 'host'>[];
  /** A monotonically growing number bumped by every mutation (cheap change detection). */
  version(): number;
}

export interface ControlStore {
  request(job_id: string, kind: ControlKind, reason?: string): ControlRequest;
  /** Unhandled requests for a job, oldest first. */
  pending(job_id: string): ControlRequest[];
  markHandled(id: number): void;
}

/**
 * Permission requests that went to a person (model/permission-ask.ts). The
 * runner opens one and waits; an answer from another process closes it, and
 * the runner, polling get(), replies to the agent. Opening and closing one
 * writes its job (listChangedAfter and the listing text see `asking`).
 */
export interface PermissionAskStore {
  open(job_id: string, ask: NewPermissionAsk): PermissionAsk;
  get(id: number): PermissionAsk | null;
  /** The job's open request (the newest, should there be more), or null. */
  openFor(job_id: string): PermissionAsk | null;
  /** Every request of a job, oldest first. */
  list(job_id: string): PermissionAsk[];
  /**
   * Ends an open request with `outcome`, in one transaction: its wait
   * (now − asked_at) is recorded and added to the job's waited_ms. null, and
   * nothing changed, when it was no longer open: the first ending wins (an
   * answer racing the timeout or an abandon).
   */
  close(id: number, outcome: AskOutcome, note?: string | null): PermissionAsk | null;
}

export interface SessionStore {
  /** `id` lets a caller claim a workspace for the session before creating it; generated when absent. */
  create(
    repo: string,
    input: { todo_id: string; workspace_path: string; topic?: string; id?: string },
  ): Session;
  get(id: string): Session | null;
  setStatus(id: string, status: SessionStatus): Session;
  list(repo: string): Session[];
}

export interface WorkspaceStore {
  /**
   * Atomically claims a free workspace of the repo for a session, or reserves
   * a new one at `pathFor(n)` (n unique per repo, and never handed out before,
   * not even for a workspace since removed). Two callers never get the
   * same path, even from two processes at the same instant.
   */
  acquire(
    repo: string,
    session_id: string,
    pathFor: (n: number) => string,
    branchFor: (n: number) => string,
    /** A free workspace for which this says true is passed over (something still runs in it). */
    busy?: (path: string) => boolean,
  ): { workspace: Workspace; created: boolean };
  setBaseRev(path: string, base_rev: string): void;
  /** Frees a claimed workspace (never one removed); given `session_id`, only while that session holds it. */
  release(path: string, session_id?: string): void;
  /**
   * Drops the record from the listing (given `session_id`, only while that
   * session holds it; false otherwise). Its number is never handed out again,
   * so its directory can be removed after this while new jobs start.
   */
  remove(path: string, session_id?: string): boolean;
  /** Drops the record only while it is free (atomically); false when someone claimed it. */
  removeIfFree(path: string): boolean;
  list(repo?: string): Workspace[];
}

export interface ProcessGroupStore {
  record(input: Omit<ProcessGroup, 'id' | 'started_at'>): ProcessGroup;
  /** Drops the record once its group has ended. */
  forget(id: number): void;
  /** The recorded groups of a job, or of every job that ran in a workspace. */
  list(filter: { job_id: string } | { workspace_path: string }): ProcessGroup[];
}

export interface RunnerStore {
  /** Records a backlog runner that has just started (lands: ii run --land; absent, it does not). */
  register(
    input: Pick<BacklogRunnerRecord, 'repo' | 'pid' | 'host' | 'slots' | 'watch'> & { lands?: boolean },
  ): BacklogRunnerRecord;
  get(id: number): BacklogRunnerRecord | null;
  /** The repository's recorded runners, oldest first (dead ones too: runnerAlive tells). */
  list(repo: string): BacklogRunnerRecord[];
  /** Changes a runner's slots (at least 1); it starts jobs by the new count from its next look. */
  setSlots(id: number, slots: number): BacklogRunnerRecord;
  /**
   * Notes that runner `id` is starting a job runner for `todoId`, in one
   * transaction with `takenElsewhere` (given the repository's other runners):
   * false, and nothing noted, when it says another has it, or when the todo
   * is no longer open (a job claimed it since the caller read it: the
   * runner that started that job took it off its list once it saw the claim,
   * and a caller that looked before the claim and takes after that would
   * start a second runner, which loses the claim).
   */
  takeStart(id: number, todoId: string, takenElsewhere: (others: BacklogRunnerRecord[]) => boolean): boolean;
  /** The todos runner `id` has started a job runner for and not yet seen claim (or fail to). */
  setStarting(id: number, todoIds: string[]): void;
  heartbeat(id: number): void;
  /** Drops the record (the runner ended, or it was found dead). */
  remove(id: number): void;
}

/** One line of a job's log in the store: its place in the job's sequence and the stream it belongs to. */
export interface StoredLogLine {
  seq: number;
  stream: string;
  line: string;
}

/**
 * Each job's event log and agent transcripts as lines in the store (a job's
 * files, for another machine: state/log-shipper.ts writes them, job-log/
 * reads them). A stream is `events` or `transcript:<agent session id>`
 * (logStream()); a job's lines, of all its streams, are numbered 1, 2, … in
 * the order they were appended, so a reader that saw seq n asks for what
 * came after it. A line is stored as written (agent output: redacted and
 * escaped where it is shown, as the files' lines are).
 */
export interface JobLogStore {
  /** Appends `lines` to a job's stream, in one write, after the job's last line (of any writer); the last seq given, or 0 for none. */
  append(jobId: string, stream: string, lines: readonly string[]): number;
  /** The job's lines after seq `after` (0: from the start), of one stream or all, oldest first, at most `limit`. */
  read(jobId: string, o?: { after?: number; stream?: string; limit?: number }): StoredLogLine[];
  /** The last seq of each of `jobIds` that has a line (what a follower compares with what it has read). */
  heads(jobIds: readonly string[]): Record<string, number>;
}

export interface StateStore {
  readonly dir: string;
  readonly dbPath: string;
  todos: TodoStore;
  jobs: JobStore;
  control: ControlStore;
  asks: PermissionAskStore;
  sessions: SessionStore;
  workspaces: WorkspaceStore;
  processGroups: ProcessGroupStore;
  runners: RunnerStore;
  logs: JobLogStore;
  /**
   * Frees the space kept beside the database (state/reserve.ts) so the end of
   * a job can be recorded on a full disk: true when there was some to free.
   */
  freeReserve(): boolean;
  close(): void;
}
