// How `ii job show` prints a job's permission requests (pure): the open one
// in full (it is the question a person must answer) and the answered ones a
// line each. Every text came from the agent: shown through src/text.
import type { Job } from '../../model/job.js';
import type { PermissionAsk } from '../../model/permission-ask.js';
import { waitText } from '../../model/waiting.js';
import { shownLine, shownText } from '../../text/shown.js';
import type { Style } from '../format.js';

/** Lines of a diff preview shown under the question. */
const DIFF_LINES = 12;

const what = (a: PermissionAsk) =>
  `${a.tool_kind ?? 'request'}: ${shownLine(a.command ?? a.title) || '(no title)'}`;

/** The open question, in full, with how to answer it. */
export function askQuestionLines(job: Job, st: Style, now = Date.now()): string[] {
  const a = job.asking;
  if (!a || job.status !== 'active') return [];
  const out = [
    `  ${st.yellow('waiting:')}   for a person since ${a.asked_at} (${waitText(now - Date.parse(a.asked_at))}): ${what(a)}`,
  ];
  if (a.command !== null && a.title && a.title !== a.command)
    out.push(`             title: ${shownLine(a.title)}`);
  if (a.paths.length) out.push(`             paths: ${a.paths.map(shownLine).join(', ')}`);
  if (a.options.length)
    out.push(
      `             agent offers: ${a.options.map((o) => `${shownLine(o.name)} (${o.kind})`).join(', ')}`,
    );
  if (a.diff_preview) {
    const lines = shownText(a.diff_preview).split('\n');
    out.push('             diff:', ...lines.slice(0, DIFF_LINES).map((l) => `               ${l}`));
    if (lines.length > DIFF_LINES) out.push(`               … ${lines.length - DIFF_LINES} more lines`);
  }
  out.push(
    `             answer: ii job answer ${job.id} allow|allow-always|reject --ask ${a.id} [--note TEXT]`,
  );
  return out;
}

/** The total wait and every closed request, a line each. */
export function askHistoryLines(job: Job, asks: PermissionAsk[]): string[] {
  const closed = asks.filter((a) => a.outcome !== null);
  if (closed.length === 0 && job.waited_ms === 0) return [];
  const out = [
    `  waited:    ${waitText(job.waited_ms)} for a person over ${closed.length} request${closed.length === 1 ? '' : 's'} (not counted as agent time)`,
  ];
  for (const a of closed)
    out.push(
      `    ${a.outcome!.padEnd(12)} after ${waitText(a.waited_ms ?? 0).padEnd(8)} ${what(a)}${a.note ? `  — ${shownLine(a.note)}` : ''}`,
    );
  return out;
}
