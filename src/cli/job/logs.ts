// The body of ii job logs (definition in index.ts). Transcripts are agent
// output: secrets are redacted and control characters escaped in the text
// (src/text/shown.ts) and in the --json entries (redactDeep, terminalJson);
// the events after each turn are shown as src/job-log/event-text.ts renders them.
import { jobEvents, jobLogLines, testLogLines } from '../../job-log/log-lines.js';
import { storedEventsAreTheRecord, type StoredJobLog } from '../../job-log/store-source.js';
import type { Job } from '../../model/job.js';
import { readJsonLines, skippedWarning } from '../../state/jsonl.js';
import { eventsFile } from '../../state/paths.js';
import { terminalJson } from '../../text/json.js';
import { redactDeep } from '../../text/redact.js';
import { UserError } from '../../errors.js';
import { currentRepo, withStore } from '../context.js';
import { style, type Style } from '../format.js';
import type { LogsOptions } from './options.js';
import { storedLogIfNeeded } from './stored-log.js';

export async function jobLogs(id: string, o: LogsOptions): Promise<void> {
  const repo = currentRepo();
  const { job, stateDir } = await withStore(async (s) => ({
    job: await s.jobs.resolve(repo.slug, id),
    stateDir: s.dir,
  }));
  const st = style();
  // A job of another machine: its files are there, its lines in the shared store.
  const stored = await storedLogIfNeeded(stateDir, job, (m) =>
    process.stderr.write(st.yellow(`warning: ${m}`) + '\n'),
  );
  const print = () =>
    printJobLogs(job, { json: Boolean(o.json), tests: Boolean(o.tests), st, stateDir, stored });
  if (!o.follow || job.status !== 'active') return print();
  if (o.json || o.tests) throw new UserError('--follow shows the log as text: leave out --json and --tests.');
  const { followFiles, followStore, printedSessions } = await import('./logs-follow.js');
  const write = (lines: string[]) => process.stdout.write(lines.map((l) => l + '\n').join(''));
  // Ctrl-C ends the follow (the job runs on), exit 0.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  try {
    if (stored) {
      print();
      const last = job.agent_sessions.at(-1);
      const entries = last ? (stored.transcriptValues(last.id) ?? []) : [];
      await followStore(stateDir, stored, printedSessions(job, entries), write, stop.signal);
    } else await followFiles(job, stateDir, print, write, stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
  }
}

export function printJobLogs(
  job: Job,
  o: { json: boolean; tests?: boolean; st: Style; stateDir?: string; stored?: StoredJobLog | null },
  out = process.stdout,
): void {
  if (o.json) {
    // Each transcript line as it was recorded, tagged with its session;
    // secrets redacted in its strings, control characters \u-escaped.
    for (const a of job.agent_sessions) {
      const t = readTranscript(a.transcript) ?? o.stored?.transcript(a.id);
      for (const l of t ?? []) {
        const entry = l.ok ? l.value : { unparsed: l.raw };
        out.write(terminalJson(redactDeep({ agent_session_id: a.id, purpose: a.purpose, entry })) + '\n');
      }
    }
    return;
  }
  const fromStore = o.stateDir ? storedEventsAreTheRecord(o.stateDir, job, o.stored) : Boolean(o.stored);
  const log =
    fromStore && o.stored
      ? o.stored.parsedEvents()
      : o.stateDir
        ? jobEvents(o.stateDir, job.id)
        : { events: [], skipped: [] };
  const lines = o.tests ? testLogLines(log.events) : jobLogLines(job, o.stateDir ?? '', log.events, o.stored);
  for (const l of lines)
    out.write(
      (l.kind === 'header' ? o.st.bold(l.text) : l.kind === 'dim' ? o.st.dim(l.text) : l.text) + '\n',
    );
  const where = fromStore ? `the shared store's events of job ${job.id}` : null;
  const skipped = o.stateDir
    ? skippedWarning(where ?? eventsFile(o.stateDir, job.id), log.skipped, 'an event')
    : null;
  if (skipped) process.stderr.write(o.st.yellow(`warning: ${skipped}`) + '\n');
}

/** A transcript's lines; null when the file is missing or unreadable. */
function readTranscript(path: string) {
  try {
    return readJsonLines(path);
  } catch {
    return null;
  }
}
