// The dashboard's state: what the store holds. Plain data, no React; the
// watcher (io/sync.ts) and the key handlers both write it through
// the store's actions (view/store.ts).
import type { LoadedIterationDiff } from '../../history/iteration-diff.js';
import type { TestRun } from '../../job-log/log-lines.js';
import type { BlockedTodo } from '../../model/backlog.js';
import type { FileChange, Job } from '../../model/job.js';
import type { BoardJob } from '../../model/job-card.js';
import type { Todo } from '../../model/todo.js';

export type Level = 'jobs' | 'changes' | 'commits' | 'detail';
export type BoardLevel = Exclude<Level, 'detail'>;
/** `ask`: the selected job's permission request in full, answered there (y, A, n). */
export type Overlay = 'help' | 'files' | 'logs' | 'diff' | 'ask' | null;

/** The cursor on one board: a column, a row, and the key of the card it is on (to follow a card that moves). */
export interface Selection {
  col: number;
  row: number;
  key: string | null;
}

export interface Confirm {
  kind: 'abandon' | 'retry' | 'land' | 'start' | 'closeTodo' | 'stopRunner' | 'allowAlways';
  /** The job or todo asked about (the repository, for the runner). */
  id: string;
  prompt: string;
  /** allowAlways: the permission request it answers (a newer one is not answered by it). */
  askId?: number;
}

/** An iteration, 1-based, as `ii job diff --from C.I` names it. */
export interface IterationId {
  change: number;
  iteration: number;
}

/** The iteration `m` marked: `d` then diffs the selected iteration against it, not the one before. */
export interface Mark extends IterationId {
  jobId: string;
}

export interface Nav {
  level: Level;
  /** What is drilled into: the job, then the change (0-based), then the iteration (0-based). */
  jobId: string | null;
  change: number | null;
  iteration: number | null;
  sel: Record<BoardLevel, Selection>;
  filter: string;
  /** The filter box is open and takes the keys. */
  filtering: boolean;
  showFinished: boolean;
  overlay: Overlay;
  confirm: Confirm | null;
  /** Scroll offset of the open overlay or of the commit detail (the log's top row). */
  scroll: number;
  /** The log (`l`) follows its end: new lines of a running job come into view, as with G. */
  follow: boolean;
  /** The commit detail shows failing tests' whole output, not only its tail (`o`). */
  fullOutput: boolean;
  /** The marked iteration of the drilled-into job; esc clears it before going back. */
  mark: Mark | null;
  /** The `n` form while it is open: it takes the keys. */
  form: TodoForm | null;
  /** The note of a rejection being typed (n in the ask view): it takes the keys. */
  note: RejectNote | null;
}

/** A rejection's note as it is typed: sent to the agent with the answer. */
export interface RejectNote {
  jobId: string;
  /** The request it answers: a request that changed meanwhile is not answered by it. */
  askId: number;
  text: string;
}

/** What a job's events.jsonl and transcripts say, read on demand (the `l` log, the detail's test output). */
export interface JobRecord {
  /** The whole log, as `ii job logs` prints it. */
  log: string[];
  tests: TestRun[];
}

/** An iteration diff (src/history's loadIterationDiff, as ii job diff), loaded on demand; or why not. */
export interface CodeDiff {
  loaded: LoadedIterationDiff | null;
  error: string | null;
}

/** The repository's open todos as the backlog decides (model/backlog.ts): ready in run order, then blocked. */
export interface BacklogState {
  ready: Todo[];
  blocked: BlockedTodo[];
  /** Ready todos' deps that are done but not landed (model/backlog.ts Backlog.unlanded); absent: none. */
  unlanded?: Record<string, string[]>;
}

export const EMPTY_BACKLOG: BacklogState = { ready: [], blocked: [] };

/**
 * The live backlog runners of the repository (ii run), as the header shows
 * them and +/- change them. A runner's slots are its machine's: it counts the
 * live jobs on its host against them (backlog/scheduler.ts), so on a shared
 * store each machine running one adds its own.
 */
export interface RunnerState {
  /** The records +/- change: this machine's runners, or every live one when none runs here. */
  ids: number[];
  /** Their pids on this host (R stops them with what Ctrl-C does); runners elsewhere are not stopped from here. */
  localPids: number[];
  /** The slots +/- start from: the most of the runners in `ids`. */
  slots: number;
  /** Each machine a live runner is on, with its slots (the most of its runners there); absent: one, `slots`. */
  hosts?: { host: string; slots: number }[];
  /** They land as they go (ii run --land): a todo waits for its deps to land (model/backlog-runner.ts runnersLand). */
  lands?: boolean;
}

/** The `n` form: a todo typed in field by field. */
export type FormField = 'title' | 'type' | 'priority' | 'description';
export const FORM_FIELDS: readonly FormField[] = ['title', 'type', 'priority', 'description'];

export interface TodoForm {
  field: FormField;
  /** The fields entered so far. */
  values: Partial<Record<FormField, string>>;
  /** What is typed into the current field. */
  text: string;
}

export interface DashboardState {
  /** The repository's slug, or null for every repository. */
  repo: string | null;
  repoLabel: string;
  /** A launcher's label for the header line (ii demo: the jobs run on the scripted agent), or null. */
  banner: string | null;
  /**
   * Newest first; unchanged jobs keep their object identity across reloads
   * (memoized cards). Active jobs and the shown one are whole records, other
   * finished jobs their cards (model/job-card.ts): io/sync.ts reads a job's
   * whole record when the board shows it.
   */
  jobs: BoardJob[];
  /**
   * The whole record of the job the board shows (selected or drilled into)
   * when its entry in `jobs` is a card, as io/sync.ts read it; else null or
   * a record no longer looked at (board.ts wholeJob decides).
   */
  shown?: Job | null;
  todoTitles: Record<string, string>;
  /** The Backlog column's todos (a repository's dashboard only). */
  backlog: BacklogState;
  /** The repository's backlog runner while one runs, else null. */
  runner: RunnerState | null;
  stale: Record<string, boolean>;
  /** The live pane of each job: its agent's latest messages and tool calls, and its events. */
  live: Record<string, string[]>;
  /** The tracker's modified files of each job, latest state per path: the job's total, what `f` lists. */
  files: Record<string, FileChange[]>;
  /**
   * The tracker's files of each job's current iteration, the status bar's
   * count: emptied when its next implement pass starts (the file-tracking
   * spec clears the set at each iteration start). A job the board has seen
   * no pass of has none: its record's last iteration stands in.
   */
  iterationFiles: Record<string, FileChange[]>;
  /** Jobs' logs and test runs, loaded when a view needs them and kept fresh while loaded. */
  records: Record<string, JobRecord>;
  /** Code diffs keyed by diffKey (1-based, as ii job diff). */
  diffs: Record<string, CodeDiff>;
  nav: Nav;
  /** The cells and rows of the log's text (the view draws it): j, k and the pages move by its rows. */
  logSize: { width: number; height: number };
  /** The last action's outcome, shown in the status bar. */
  message: string | null;
  color: boolean;
}

export const initialNav = (): Nav => ({
  level: 'jobs',
  jobId: null,
  change: null,
  iteration: null,
  sel: {
    jobs: { col: 0, row: 0, key: null },
    changes: { col: 0, row: 0, key: null },
    commits: { col: 0, row: 0, key: null },
  },
  filter: '',
  filtering: false,
  showFinished: true,
  overlay: null,
  confirm: null,
  scroll: 0,
  follow: true,
  fullOutput: false,
  mark: null,
  form: null,
  note: null,
});

/** The key of an iteration's diff against the one before, or against `from` (a marked iteration). */
export const diffKey = (
  jobId: string,
  change: number,
  iteration: number,
  from?: IterationId | null,
): string =>
  from
    ? `${jobId}:${from.change}.${from.iteration}:${change}:${iteration}`
    : `${jobId}:${change}:${iteration}`;

/** "1.3": an iteration as the dashboard and `ii job diff --from/--to` spell it. */
export const iterationLabel = (i: IterationId): string => `${i.change}.${i.iteration}`;
