// Writing a job's journal, or reusing the one on disk when nothing it was
// built from changed: the job record (its updated_at and content), the event
// log, the notes and the stop file (size and mtime), and whether a running
// job's runner is still alive. The runner calls writeJournal when a job
// finishes; `ii job journal` calls it on demand.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { UserError } from '../errors.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { buildJournal } from './build.js';
import { journalJsonFile, journalMdFile } from './files.js';
import { fingerprint, gatherInputs, generator, type GatherOptions } from './gather.js';
import { renderJournalMd } from './render-md.js';
import { Journal } from './schema.js';

export interface WriteJournalOptions extends GatherOptions {
  /** Rebuild even when the journal on disk is up to date. */
  force?: boolean;
}

export interface WrittenJournal {
  journal: Journal;
  markdown: string;
  /** True when the files on disk were up to date and were not rewritten. */
  reused: boolean;
  jsonPath: string;
  mdPath: string;
}

/** Writes `text` so a reader sees the old file or the new one, never half of one. */
function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
}

/** The journal on disk, if it parses as one. */
function readExisting(jsonPath: string, mdPath: string): { journal: Journal; markdown: string } | null {
  try {
    const journal = Journal.parse(JSON.parse(readFileSync(jsonPath, 'utf8')));
    return { journal, markdown: readFileSync(mdPath, 'utf8') };
  } catch {
    return null; // missing, torn or from another schema: rebuilt below
  }
}

/**
 * Writes (or reuses) jobs/<id>/journal.json and journal.md. Never throws for
 * a missing file or a failing git command (those become warnings in the
 * journal); throws a UserError for a job that is not in the store.
 */
export async function writeJournal(
  store: AsyncStateStore,
  stateDir: string,
  jobId: string,
  opts: WriteJournalOptions = {},
): Promise<WrittenJournal> {
  const jsonPath = journalJsonFile(stateDir, jobId);
  const mdPath = journalMdFile(stateDir, jobId);
  const job = await store.jobs.get(jobId);
  if (!job) throw new UserError(`no job ${jobId} in ${store.location}; list jobs with ii job list --all`);
  if (!opts.force && existsSync(jsonPath)) {
    const old = readExisting(jsonPath, mdPath);
    const now = fingerprint(stateDir, job, opts.now ?? new Date());
    if (old && old.journal.generated_by === generator() && isDeepStrictEqual(old.journal.inputs, now))
      return { ...old, reused: true, jsonPath, mdPath };
  }
  const journal = buildJournal(await gatherInputs(store, stateDir, jobId, opts));
  const markdown = renderJournalMd(journal);
  // The markdown first: journal.json carries the fingerprint, so a crash
  // between the two leaves a journal that is rebuilt next time.
  writeAtomic(mdPath, markdown);
  writeAtomic(jsonPath, JSON.stringify(journal, null, 2) + '\n');
  return { journal, markdown, reused: false, jsonPath, mdPath };
}
