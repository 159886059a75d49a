// Everything a journal is built from, gathered by src/journal/gather.ts and
// handed to the pure builder (src/journal/build.ts), so every section and
// every failure path is testable without files, git or a store.
import type { Job } from '../model/job.js';
import type { Todo } from '../model/todo.js';
import type { JobEvent } from '../model/event.js';
import type { Skipped } from '../state/jsonl.js';
import type { GitFacts } from './git-facts.js';
import type { InputFingerprint, Note } from './schema.js';
import type { StopFile } from './stop-file.js';

/** A file's content: read, absent, or unreadable (and why). */
export type Loaded<T> = { state: 'ok'; value: T } | { state: 'missing' } | { state: 'error'; error: string };

/** The head of the job's accepted work, or why it is unknown. */
export type Head = { sha: string; source: string } | { unknown: string };

export interface JournalInputs {
  job: Job;
  /** null when the todo is no longer in the store. */
  todo: Todo | null;
  stateDir: string;
  repoRoot: string | null;
  events: Loaded<JobEvent[]>;
  /** Lines of the event log that are not events (skipped, each worth a warning). */
  eventsSkipped: Skipped[];
  notes: Loaded<{ notes: Note[]; skipped: number }>;
  stop: Loaded<StopFile>;
  head: Head;
  /** base..head facts, or why git was not asked. */
  git: GitFacts | { unavailable: string };
  /** An active job whose runner is gone (the caller probed its pid / heartbeat). */
  stale: boolean;
  now: Date;
  generatedBy: string;
  fingerprint: InputFingerprint;
}
