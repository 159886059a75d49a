// The per-job event log, jobs/<id>/events.jsonl: append-only, one JSON object
// a line. Stage transitions, test output, warnings and tracker changes go here,
// never into the job record (large text stays out of the database).
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { eventsFile } from './paths.js';

export type JobEventType =
  /** data: { from, to } stage names, or { status } when the job finished. */
  | 'stage'
  /** data: { command } */
  | 'test_start'
  /** data: { command, stream: 'stdout'|'stderr', text } (chunks, in order) */
  | 'test_output'
  /** data: { command, exit_code, duration_ms } */
  | 'test_end'
  /** data: { path, is_new, additions, deletions } from the file tracker, live */
  | 'file_change'
  /** data: { purpose, agent_session_id } */
  | 'agent_start'
  /** data: { message } */
  | 'info'
  | 'warning'
  | 'error';

export interface JobEvent {
  ts: string;
  type: JobEventType;
  [key: string]: unknown;
}

/** Appends one event; the directory is made on first use. A line is one write, so lines never interleave. */
export function appendEvent(
  stateDir: string,
  jobId: string,
  type: JobEventType,
  data: Record<string, unknown> = {},
): JobEvent {
  const path = eventsFile(stateDir, jobId);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const ev: JobEvent = { ts: new Date().toISOString(), type, ...data };
  appendFileSync(path, JSON.stringify(ev) + '\n', { mode: 0o600 });
  return ev;
}

/**
 * Every event of a job, oldest first. A missing log is empty; a torn or
 * garbled line (a writer killed mid-line) is skipped, not fatal.
 */
export function readEvents(stateDir: string, jobId: string): JobEvent[] {
  let text: string;
  try {
    text = readFileSync(eventsFile(stateDir, jobId), 'utf8');
  } catch {
    return [];
  }
  const out: JobEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const v = JSON.parse(line) as JobEvent;
      if (v && typeof v.type === 'string') out.push(v);
    } catch {}
  }
  return out;
}
