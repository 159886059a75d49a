// A job's whole log as lines, read from its record, events.jsonl and every
// agent transcript: what `ii job logs` prints and the dashboard's `l` shows,
// live or after the job ended. Text is redacted and escaped here (src/text),
// once for both; the renderer of events is src/job-log/event-text.ts.
import type { JobEvent } from '../model/event.js';
import type { Job } from '../model/job.js';
import { readEvents } from '../state/events.js';
import { jsonLineValues, type Skipped } from '../state/jsonl.js';
import { visibleLine } from '../text/sanitize.js';
import { shownLine, shownText } from '../text/shown.js';
import { eventLines, logText } from './event-text.js';
import type { StoredJobLog } from './store-source.js';
import { transcriptText } from './transcript-text.js';

/** A line with what it is, so a sink can style headers and placeholders. */
export interface LogLine {
  kind: 'header' | 'dim' | 'text';
  text: string;
}

/**
 * A transcript rendered as lines, read and parsed a part at a time (a capped
 * transcript is up to 32 MB a turn); null when the file is missing or
 * unreadable.
 */
function transcriptLines(path: string): string[] | null {
  try {
    return transcriptText(jsonLineValues(path));
  } catch {
    return null;
  }
}

/** The job's events; none (and the reason) when events.jsonl cannot be read. */
export function jobEvents(stateDir: string, jobId: string): { events: JobEvent[]; skipped: Skipped[] } {
  try {
    const r = readEvents(stateDir, jobId);
    return { events: r.values, skipped: r.skipped };
  } catch {
    return { events: [], skipped: [] };
  }
}

const resolvePath = (stateDir: string, p: string) => (p.startsWith('/') ? p : `${stateDir}/${p}`);

/**
 * Every agent session's transcript in order, each followed by the events
 * logged during its turn (tests with their output tail, stage changes,
 * verdicts, commits); events before the first agent come first. A
 * transcript whose file is not here is read from `stored`, the shared
 * store's copy (a job of another machine), when given.
 */
export function jobLogLines(
  job: Job,
  stateDir: string,
  events: JobEvent[],
  stored?: StoredJobLog | null,
): LogLine[] {
  const out: LogLine[] = [];
  const before: JobEvent[] = [];
  const during = new Map<string, JobEvent[]>();
  let cur: JobEvent[] = before;
  for (const e of events) {
    if (e.type === 'agent_start') during.set(e.agent_session_id, (cur = []));
    else cur.push(e);
  }
  const push = (es: JobEvent[]) => {
    for (const l of es.flatMap(eventLines)) out.push({ kind: 'text', text: logText(l) });
  };
  push(before);
  if (job.agent_sessions.length === 0) out.push({ kind: 'dim', text: '(no agent sessions yet)' });
  job.agent_sessions.forEach((a, i) => {
    if (i > 0 || out.length) out.push({ kind: 'text', text: '' });
    out.push({
      kind: 'header',
      text: `=== ${i + 1}. ${a.purpose} · agent session ${visibleLine(a.id)}${a.started_at ? ` · ${a.started_at}` : ''} ===`,
    });
    let lines = transcriptLines(resolvePath(stateDir, a.transcript));
    const fromStore = lines ? null : (stored?.transcriptValues(a.id) ?? null);
    if (fromStore) lines = transcriptText(fromStore);
    if (!lines) out.push({ kind: 'dim', text: `  (no transcript at ${visibleLine(a.transcript)})` });
    else {
      // Redacted as one text: a private key block spans lines.
      if (lines.length)
        for (const l of shownText(lines.join('\n')).split('\n')) out.push({ kind: 'text', text: l });
      else out.push({ kind: 'dim', text: '  (empty transcript)' });
    }
    // The agent's own warnings are in the transcript just shown: not twice.
    const events = during.get(a.id) ?? [];
    push(lines ? events.filter((e) => !(e.type === 'warning' && e.agent_session_id === a.id)) : events);
  });
  if (job.failure_reason)
    out.push({ kind: 'text', text: '' }, { kind: 'text', text: `reason: ${shownText(job.failure_reason)}` });
  return out;
}

/** One test command's run: its header and its whole output as it came (redacted, escaped). */
export interface TestRun {
  /** 1-based change and iteration the run tested, when an iteration was recorded before it. */
  change: number | null;
  iteration: number | null;
  command: string;
  exitCode: number | null;
  durationMs: number | null;
  timedOutAfterS: number | undefined;
  /** The whole output, redacted and escaped, newlines kept. */
  output: string;
}

/** Every test command run of the job, in order, attributed to the iteration recorded before it. */
export function testRuns(events: JobEvent[]): TestRun[] {
  const runs: TestRun[] = [];
  let change: number | null = null;
  let iteration: number | null = null;
  let open: { run: TestRun; chunks: string[] } | null = null;
  const close = (tail?: string) => {
    if (!open) return;
    const raw = open.chunks.length ? open.chunks.join('') : (tail ?? '');
    open.run.output = shownText(raw);
    runs.push(open.run);
    open = null;
  };
  // A run that starts at test_start, or at a test_end whose start was not logged.
  const fresh = (command: string) => ({
    run: {
      change,
      iteration,
      command,
      exitCode: null,
      durationMs: null,
      timedOutAfterS: undefined,
      output: '',
    } as TestRun,
    chunks: [] as string[],
  });
  for (const e of events) {
    if (e.type === 'iteration:started') {
      change = e.change_number;
      iteration = e.iteration;
    } else if (e.type === 'test_start') {
      close();
      open = fresh(e.command);
    } else if (e.type === 'test_output' && open && e.command === open.run.command) open.chunks.push(e.text);
    else if (e.type === 'test_end') {
      if (!open || open.run.command !== e.command) open = fresh(e.command);
      open.run.exitCode = e.exit_code;
      open.run.durationMs = e.duration_ms;
      open.run.timedOutAfterS = e.timed_out_after_s;
      close(e.tail);
    }
  }
  close();
  return runs;
}

/** `ii job logs --tests`: every test run with its whole output. */
export function testLogLines(events: JobEvent[]): LogLine[] {
  const runs = testRuns(events);
  if (runs.length === 0) return [{ kind: 'dim', text: '(no tests run yet)' }];
  const out: LogLine[] = [];
  for (const r of runs) {
    if (out.length) out.push({ kind: 'text', text: '' });
    const where = r.change != null ? `change ${r.change} iteration ${r.iteration} · ` : '';
    const how =
      r.exitCode == null
        ? 'running'
        : r.timedOutAfterS !== undefined
          ? `timed out after ${r.timedOutAfterS} s`
          : `exit ${r.exitCode}`;
    out.push({
      kind: 'header',
      text: `=== ${where}$ ${shownLine(r.command)} · ${how}${r.durationMs != null ? `, ${r.durationMs} ms` : ''} ===`,
    });
    const body = r.output.replace(/\n$/, '');
    if (body) for (const l of body.split('\n')) out.push({ kind: 'text', text: l });
    else out.push({ kind: 'dim', text: '  (no output)' });
  }
  return out;
}
