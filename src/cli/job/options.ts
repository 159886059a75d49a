// The options of the ii job commands, as commander hands them to the bodies.
// Their own file so the wiring (index.ts) and the bodies both import them and
// neither imports the other's code.
import type { Todo } from '../../model/todo.js';

export interface ListOptions {
  status?: string;
  all?: boolean;
  json?: boolean;
}

export interface LandOptions {
  onto?: string;
  /** commander's --no-test. */
  test?: boolean;
  json?: boolean;
  /** Go on with a landing stopped in a conflict, once resolved. */
  continue?: boolean;
  /** Undo a landing stopped in a conflict. */
  abort?: boolean;
  /** A conflict stops for a person instead of going to the agent ([land] on-conflict = "stop"). */
  stopOnConflict?: boolean;
}

export interface ShowOptions {
  json?: boolean;
}

export interface LogsOptions {
  json?: boolean;
  tests?: boolean;
  follow?: boolean;
}

export interface DoOptions {
  title?: string;
  type: Todo['type'];
  priority: number;
  desc?: string;
  deps: string[];
  edit?: boolean;
  rev?: string;
  agent?: string;
  autoCommit?: boolean | string;
  allowFailingBaseline?: boolean;
  /** Started by ii run: claim the todo only while it is ready (exit 75 when not). */
  backlog?: boolean;
  /**
   * ii run's standby (with --backlog, no todo): loads what a job needs, then
   * waits for its todo id, one line on stdin; exits at once on EOF (ii run gone).
   */
  standby?: boolean;
  /** With --standby: fd 3 is ii run's, to say the job ended and it waits for another todo (do.ts standby). */
  back?: boolean;
  /** Started by ii run --land: the job is to land once completed (with --backlog). */
  toLand?: boolean;
  /** Started by ii run with other jobs at once: its start at the floor (proc/priority.ts bootLow). */
  bootLow?: boolean;
}

export interface RetryOptions {
  agent?: string;
  rev?: string;
  allowFailingBaseline?: boolean;
}

export interface AbandonOptions {
  reason?: string;
  wait?: boolean;
}

export interface AnswerOptions {
  note?: string;
  ask?: number;
}

export interface DiffOptions {
  change?: number;
  iteration?: number;
  from?: string;
  to?: string;
  json?: boolean;
  recompute?: boolean;
}
