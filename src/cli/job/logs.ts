// The body of ii job logs (definition in index.ts). Transcripts are agent
// output: secrets are redacted and control characters escaped in the text
// (src/text/shown.ts) and in the --json entries (redactDeep, terminalJson);
// the events after each turn are shown as src/job-log/event-text.ts renders them.
import { jobEvents, jobLogLines, testLogLines } from '../../job-log/log-lines.js';
import type { Job } from '../../model/job.js';
import { readJsonLines, skippedWarning } from '../../state/jsonl.js';
import { eventsFile } from '../../state/paths.js';
import { terminalJson } from '../../text/json.js';
import { redactDeep } from '../../text/redact.js';
import { currentRepo, withStore } from '../context.js';
import { style, type Style } from '../format.js';

export async function jobLogs(id: string, o: { json?: boolean; tests?: boolean }): Promise<void> {
  const repo = currentRepo();
  const { job, stateDir } = await withStore(async (s) => ({
    job: await s.jobs.resolve(repo.slug, id),
    stateDir: s.dir,
  }));
  printJobLogs(job, { json: Boolean(o.json), tests: Boolean(o.tests), st: style(), stateDir });
}

export function printJobLogs(
  job: Job,
  o: { json: boolean; tests?: boolean; st: Style; stateDir?: string },
  out = process.stdout,
): void {
  if (o.json) {
    // Each transcript line as it was recorded, tagged with its session;
    // secrets redacted in its strings, control characters \u-escaped.
    for (const a of job.agent_sessions) {
      const t = readTranscript(a.transcript);
      for (const l of t ?? []) {
        const entry = l.ok ? l.value : { unparsed: l.raw };
        out.write(terminalJson(redactDeep({ agent_session_id: a.id, purpose: a.purpose, entry })) + '\n');
      }
    }
    return;
  }
  const log = o.stateDir ? jobEvents(o.stateDir, job.id) : { events: [], skipped: [] };
  const lines = o.tests ? testLogLines(log.events) : jobLogLines(job, o.stateDir ?? '', log.events);
  for (const l of lines)
    out.write(
      (l.kind === 'header' ? o.st.bold(l.text) : l.kind === 'dim' ? o.st.dim(l.text) : l.text) + '\n',
    );
  const skipped = o.stateDir ? skippedWarning(eventsFile(o.stateDir, job.id), log.skipped, 'an event') : null;
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
