// The journal's thin I/O layer: reads the job record, the event log, the
// notes, the stop file and a few git facts, and turns every failure into a
// fact the pure builder reports (a null section and a warning).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { isStale } from '../model/derive.js';
import { localProbe } from '../proc/alive.js';
import type { Job } from '../model/job.js';
import { packageRoot } from '../package-root.js';
import type { AsyncStateStore } from '../state/async-api.js';
import type { JobEvent } from '../model/event.js';
import { parseEvents } from '../state/events.js';
import type { Skipped } from '../state/jsonl.js';
import { eventsFile } from '../state/paths.js';
import { notesFile, readText, stamp, stopFile, type Read } from './files.js';
import { gatherGitFacts, repoRootOf, type GitFacts } from './git-facts.js';
import type { JournalInputs, Loaded } from './inputs.js';
import { parseNotes } from './notes.js';
import type { InputFingerprint } from './schema.js';
import { acceptedHead } from './sections.js';
import { parseStopFile } from './stop-file.js';

export interface GatherOptions {
  /** The repository's root; found from the job's workspace when not given. */
  repoRoot?: string;
  now?: Date;
}

let generatedBy: string | undefined;
/** "incrementum <version>", from the package's own package.json. */
export function generator(): string {
  if (generatedBy) return generatedBy;
  try {
    const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string };
    generatedBy = `incrementum ${pkg.version ?? 'unknown'}`;
  } catch {
    generatedBy = 'incrementum';
  }
  return generatedBy;
}

export function jobIsStale(job: Job, now: Date): boolean {
  return job.status === 'active' && isStale(job, now.getTime(), localProbe);
}

/** Everything a journal's freshness depends on (cheap: a hash and three stats). */
export function fingerprint(stateDir: string, job: Job, now: Date): InputFingerprint {
  const { heartbeat_at: _beat, ...record } = job;
  return {
    job_updated_at: job.updated_at,
    job_sha256: createHash('sha256').update(JSON.stringify(record)).digest('hex'),
    stale: jobIsStale(job, now),
    events: stamp(eventsFile(stateDir, job.id)),
    notes: stamp(notesFile(stateDir, job.id)),
    stop: stamp(stopFile(stateDir, job.id)),
  };
}

function load<T>(read: Read, parse: (text: string) => T | string): Loaded<T> {
  if ('error' in read) return { state: 'error', error: read.error };
  if (read.text === null) return { state: 'missing' };
  const v = parse(read.text);
  return typeof v === 'string' ? { state: 'error', error: v } : { state: 'ok', value: v };
}

const NO_FACTS: GitFacts = {
  log: { ok: true, value: [] },
  numstat: { ok: true, value: [] },
  diffStat: { ok: true, value: '' },
};

/** Reads everything the journal of `job` needs. Throws only for a job that is not in the store. */
export async function gatherInputs(
  store: AsyncStateStore,
  stateDir: string,
  jobId: string,
  opts: GatherOptions = {},
): Promise<JournalInputs> {
  const job = await store.jobs.get(jobId);
  if (!job) throw new UserError(`no job ${jobId} in ${store.location}; list jobs with ii job list --all`);
  const now = opts.now ?? new Date();
  // Before reading anything: a line appended meanwhile then rebuilds the journal next time.
  const inputs = fingerprint(stateDir, job, now);
  const todo = await store.todos.get(job.repo, job.todo_id);
  // A line that is not an event (torn by a killed writer, garbled) is skipped and reported.
  let eventsSkipped: Skipped[] = [];
  const events = load(readText(eventsFile(stateDir, job.id)), (text): JobEvent[] => {
    const parsed = parseEvents(text);
    eventsSkipped = parsed.skipped;
    return parsed.values;
  });
  const notes = load(readText(notesFile(stateDir, job.id)), parseNotes);
  const stop = load(readText(stopFile(stateDir, job.id)), parseStopFile);
  const workspace = job.workspace_path && existsSync(job.workspace_path) ? job.workspace_path : null;
  const repoRoot = opts.repoRoot ?? (workspace ? await repoRootOf(workspace) : null);
  const head = acceptedHead(job, events.state === 'ok' ? events.value : null);
  let git: JournalInputs['git'];
  if (!job.base_rev) git = { unavailable: 'the job record has no base revision' };
  else if ('unknown' in head) git = { unavailable: head.unknown };
  else if (head.sha === job.base_rev) git = NO_FACTS;
  else {
    const cwd = repoRoot ?? workspace;
    git = cwd
      ? await gatherGitFacts(cwd, job.base_rev, head.sha)
      : { unavailable: 'no repository to ask: the repository root is unknown and the workspace is gone' };
  }
  return {
    job,
    todo,
    stateDir,
    repoRoot,
    events,
    eventsSkipped,
    notes,
    stop,
    head,
    git,
    stale: jobIsStale(job, now),
    now,
    generatedBy: generator(),
    fingerprint: inputs,
  };
}
