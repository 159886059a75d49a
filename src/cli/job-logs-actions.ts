// The body of ii job logs (definition in job-logs.ts). Transcripts are agent
// output: secrets are redacted and control characters escaped in the text
// (src/text/shown.ts) and in the --json entries (redactDeep, terminalJson);
// the events after each turn are shown as src/job/event-text.ts renders them.
import { eventLines, logText } from '../job/event-text.js';
import { transcriptText } from '../job/transcript-text.js';
import type { JobEvent } from '../model/event.js';
import type { Job } from '../model/job.js';
import { readEvents } from '../state/events.js';
import { readJsonLines, skippedWarning } from '../state/jsonl.js';
import { eventsFile } from '../state/paths.js';
import { terminalJson } from '../text/json.js';
import { redactDeep } from '../text/redact.js';
import { visibleLine } from '../text/sanitize.js';
import { shownText } from '../text/shown.js';
import { currentRepo, withStore } from './context.js';
import { style, type Style } from './format.js';

export async function jobLogs(id: string, o: { json?: boolean }): Promise<void> {
  const repo = currentRepo();
  const { job, stateDir } = await withStore((s) => ({ job: s.jobs.resolve(repo.slug, id), stateDir: s.dir }));
  printJobLogs(job, { json: Boolean(o.json), st: style(), stateDir });
}

/** The events logged during each agent session's turn (from its start to the next agent's). */
function eventsBySession(events: JobEvent[]): Map<string, JobEvent[]> {
  const by = new Map<string, JobEvent[]>();
  let cur: JobEvent[] | null = null;
  for (const e of events) {
    if (e.type === 'agent_start') by.set(e.agent_session_id, (cur = []));
    else cur?.push(e);
  }
  return by;
}

/** A transcript's lines; null when the file is missing or unreadable. */
function readTranscript(path: string) {
  try {
    return readJsonLines(path);
  } catch {
    return null;
  }
}

export function printJobLogs(
  job: Job,
  o: { json: boolean; st: Style; stateDir?: string },
  out = process.stdout,
): void {
  if (job.agent_sessions.length === 0) {
    if (!o.json) out.write(`job ${job.id} has no agent sessions yet.\n`);
    return;
  }
  const log = !o.json && o.stateDir ? readEvents(o.stateDir, job.id) : { values: [], skipped: [] };
  const during = eventsBySession(log.values);
  job.agent_sessions.forEach((a, i) => {
    const t = readTranscript(a.transcript);
    if (o.json) {
      // Each transcript line as it was recorded, tagged with its session;
      // secrets redacted in its strings, control characters \u-escaped.
      for (const l of t ?? []) {
        const entry = l.ok ? l.value : { unparsed: l.raw };
        out.write(terminalJson(redactDeep({ agent_session_id: a.id, purpose: a.purpose, entry })) + '\n');
      }
      return;
    }
    if (i > 0) out.write('\n');
    out.write(
      o.st.bold(
        `=== ${i + 1}. ${a.purpose} · agent session ${visibleLine(a.id)}${a.started_at ? ` · ${a.started_at}` : ''} ===`,
      ) + '\n',
    );
    if (!t) out.write(o.st.dim(`  (no transcript at ${visibleLine(a.transcript)})`) + '\n');
    else {
      const lines = transcriptText(t.flatMap((l) => (l.ok ? [l.value] : [])));
      // Redacted as one text: a private key block spans lines.
      out.write((lines.length ? shownText(lines.join('\n')) : o.st.dim('  (empty transcript)')) + '\n');
    }
    // What the job recorded after this turn: tests, the verdict, the commit.
    const after = (during.get(a.id) ?? []).flatMap(eventLines).map(logText);
    if (after.length) out.write(after.join('\n') + '\n');
  });
  const skipped = o.stateDir ? skippedWarning(eventsFile(o.stateDir, job.id), log.skipped, 'an event') : null;
  if (skipped) process.stderr.write(o.st.yellow(`warning: ${skipped}`) + '\n');
}
