// What the views may ask of the dashboard beyond moving: the interface the
// components call. io/actions.ts implements it (git, the store, child
// processes); what writes or reads the store gives a Promise there (the
// store's API is asynchronous), settled once the action is done.
import type { AskAnswer } from '../../model/permission-ask.js';
import type { KeyPress } from './keymap.js';
import type { IterationId } from './state.js';

export interface Actions {
  /** Abandons a job; closeTodo: its todo is closed too, so no runner starts it again. */
  abandon(jobId: string, o?: { closeTodo?: boolean }): Promise<void>;
  retry(jobId: string): void | Promise<void>;
  /** Asks whether to land a completed job, saying where, which commits and whether the tests run. */
  askLand(jobId: string): Promise<void>;
  /** Lands a completed job in the background (a detached `ii job land`); its card shows the progress. */
  land(jobId: string): void;
  /** Creates the todo of the finished `n` form (the store checks it as ii todo create does). */
  createTodo(): void | Promise<void>;
  /** Starts a job for a todo now, in the background (ii job do <todo>). */
  startTodo(todoId: string): void;
  closeTodo(todoId: string): void | Promise<void>;
  /** Opens $EDITOR on a todo, the board put away meanwhile. */
  editTodo(todoId: string): void | Promise<void>;
  /** Starts the repository's backlog runner, or asks whether to stop the running one. */
  toggleRunner(): void;
  /** Stops the backlog runner as Ctrl-C does: no new jobs, the running ones go on. */
  stopRunner(): void;
  /** Changes the runner's slots by delta (at least 1). */
  changeSlots(delta: number): void | Promise<void>;
  /** Loads an iteration's diff against the one before it, or against `from` (a marked iteration). */
  loadDiff(jobId: string, change: number, iteration: number, from?: IterationId | null): Promise<void>;
  /** Reads the job's whole log and test runs (events.jsonl, transcripts) into the store. */
  loadRecord(jobId: string): void | Promise<void>;
  /**
   * Answers a waiting job's permission request (the one with `askId`; a
   * request that changed meanwhile is left alone), then moves the board to
   * the next job that waits, as an inbox does.
   */
  answer(jobId: string, askId: number, answer: AskAnswer, note?: string): void | Promise<void>;
  /** Runs what a key press means in the current mode. */
  key(input: string, key: KeyPress): void;
}
