// The body of ii job logs (definition in job-logs.ts). Transcripts are agent
// output: secrets are redacted and control characters escaped in the text
// (src/text/shown.ts) and in the --json entries (redactDeep, terminalJson).
import { readFileSync } from 'node:fs';
import { transcriptText } from '../job/transcript-text.js';
import type { Job } from '../model/job.js';
import { terminalJson } from '../text/json.js';
import { redactDeep } from '../text/redact.js';
import { visibleLine } from '../text/sanitize.js';
import { shownText } from '../text/shown.js';
import { currentRepo, withStore } from './context.js';
import { style, type Style } from './format.js';

export async function jobLogs(id: string, o: { json?: boolean }): Promise<void> {
  const repo = currentRepo();
  const j = await withStore((s) => s.jobs.resolve(repo.slug, id));
  printJobLogs(j, { json: Boolean(o.json), st: style() });
}

/** The transcript's lines, parsed; a torn last line (a killed writer) is skipped. */
function readLines(path: string): { raw: string[]; parsed: unknown[] } | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const raw = text.split('\n').filter((l) => l.trim());
  const parsed: unknown[] = [];
  for (const l of raw) {
    try {
      parsed.push(JSON.parse(l));
    } catch {}
  }
  return { raw, parsed };
}

export function printJobLogs(job: Job, o: { json: boolean; st: Style }, out = process.stdout): void {
  if (job.agent_sessions.length === 0) {
    if (!o.json) out.write(`job ${job.id} has no agent sessions yet.\n`);
    return;
  }
  job.agent_sessions.forEach((a, i) => {
    const t = readLines(a.transcript);
    if (o.json) {
      // Each transcript line as it was recorded, tagged with its session;
      // secrets redacted in its strings, control characters \u-escaped.
      for (const l of t?.raw ?? []) {
        let entry: unknown;
        try {
          entry = JSON.parse(l);
        } catch {
          entry = { unparsed: l };
        }
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
    if (!t) {
      out.write(o.st.dim(`  (no transcript at ${visibleLine(a.transcript)})`) + '\n');
      return;
    }
    const lines = transcriptText(t.parsed);
    // Redacted as one text: a private key block spans lines.
    out.write((lines.length ? shownText(lines.join('\n')) : o.st.dim('  (empty transcript)')) + '\n');
  });
}
