// The per-job event log, jobs/<id>/events.jsonl: append-only, one event of
// the job's stream (src/model/event.ts) a line. Stage transitions, test
// output, verdicts, commits, warnings and tracker changes go here, never into
// the job record (large text stays out of the database).
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { JobEvent, type EventData, type JobEventType } from '../model/event.js';
import { JsonLinesTail, parseJsonLines, partition, readJsonLines, type JsonLines } from './jsonl.js';
import { logMirror } from './log-mirror.js';
import { eventsFile } from './paths.js';

/** The event logs this process has appended to: their directory is there (or the append says it is not). */
const appended = new Set<string>();

/** Stamps and appends one event; the directory is made on first use. A line is one write, so lines never interleave. */
export function appendEvent<T extends JobEventType>(
  stateDir: string,
  jobId: string,
  type: T,
  data: EventData<T>,
): JobEvent {
  const path = eventsFile(stateDir, jobId);
  // Parsed as a reader will: a writer's mistake fails here, not in every reader.
  const ev = JobEvent.parse({ ts: new Date().toISOString(), type, ...data });
  const line = JSON.stringify(ev);
  // A runner appends ~14 events per iteration outside its agent turns and
  // tests: making the directory (a recursive mkdir) before each was a
  // quarter of an append. It is made before the first, and again if gone.
  if (!appended.has(path)) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    appendFileSync(path, line + '\n', { mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    appendFileSync(path, line + '\n', { mode: 0o600 });
  }
  appended.add(path);
  // The shared store's copy (log-mirror.ts), sent at once at a stage's end and the job's.
  logMirror()?.event(jobId, line, type === 'stage' || type === 'finished');
  return ev;
}

/**
 * Parses a bare event of each type in `types`, which fails, but leaves each
 * type's parser compiled (zod compiles an object's parser at its first use):
 * a standby runner does this while it waits, for the events a job appends
 * on its way to its first prompt.
 */
export function warmEventParsers(types: readonly JobEventType[]): void {
  for (const type of types) JobEvent.safeParse({ type });
}

/** The events in an event log's text, and the lines that are not events (torn, garbled, unknown). */
export function parseEvents(text: string): JsonLines<JobEvent> {
  return partition(parseJsonLines(text, JobEvent));
}

/**
 * Every event of a job, oldest first, and the lines skipped. A missing log is
 * empty; a line that is not an event (a writer killed mid-line) is skipped,
 * not fatal and not trusted.
 */
export function readEvents(stateDir: string, jobId: string): JsonLines<JobEvent> {
  return partition(readJsonLines(eventsFile(stateDir, jobId), JobEvent) ?? []);
}

/** Follows a job's event log: each read() gives the events appended since the last. */
export function tailEvents(stateDir: string, jobId: string): JsonLinesTail<JobEvent> {
  return new JsonLinesTail(eventsFile(stateDir, jobId), JobEvent);
}
