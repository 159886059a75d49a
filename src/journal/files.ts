// The journal's files in a job's directory, and how to read them without
// ever throwing: a file that is missing or garbled is a fact for the journal
// (a null section and a warning), not an error.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { jobDir } from '../state/paths.js';
import type { FileStamp } from './schema.js';

export const journalJsonFile = (stateDir: string, jobId: string): string =>
  join(jobDir(stateDir, jobId), 'journal.json');
export const journalMdFile = (stateDir: string, jobId: string): string =>
  join(jobDir(stateDir, jobId), 'journal.md');
export const notesFile = (stateDir: string, jobId: string): string =>
  join(jobDir(stateDir, jobId), 'notes.jsonl');
export const stopFile = (stateDir: string, jobId: string): string =>
  join(jobDir(stateDir, jobId), 'stop.json');

/** A file's text, null when it does not exist, or why it could not be read. */
export type Read = { text: string | null } | { error: string };

export function readText(path: string): Read {
  try {
    return { text: readFileSync(path, 'utf8') };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return { text: null };
    return { error: `${path}: ${e.code ?? e.message}` };
  }
}

/** Size and mtime of a file, null when it does not exist (or cannot be stat'ed). */
export function stamp(path: string): FileStamp | null {
  try {
    const s = statSync(path);
    return { size: s.size, mtime_ms: s.mtimeMs };
  } catch {
    return null;
  }
}
