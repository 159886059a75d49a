// jobs/<id>/notes.jsonl: what people (or scripts) note about a job, one
// {ts, text} object a line, appended by `ii job note`. A note changes the
// journal's inputs, so the next `ii job journal` rebuilds it.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { UserError } from '../errors.js';
import { parseJsonLines, partition } from '../state/jsonl.js';
import { notesFile } from './files.js';
import { Note } from './schema.js';

/** Appends a note; one write per line, so concurrent writers never interleave. */
export function appendNote(stateDir: string, jobId: string, text: string, at: Date = new Date()): Note {
  const trimmed = text.trim();
  if (!trimmed)
    throw new UserError('the note is empty: give the text to record, e.g. ii job note <job> "why"');
  const path = notesFile(stateDir, jobId);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const note: Note = { ts: at.toISOString(), text: trimmed };
  appendFileSync(path, JSON.stringify(note) + '\n', { mode: 0o600 });
  return note;
}

/** The notes in a notes file's text, and how many lines were not notes. */
export function parseNotes(text: string): { notes: Note[]; skipped: number } {
  const { values, skipped } = partition(parseJsonLines(text, Note));
  return { notes: values, skipped: skipped.length };
}
