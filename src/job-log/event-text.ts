// How the job's events read, for every place that shows them: `ii job do`'s
// progress, `ii job logs` and the dashboard's live pane. One function, so a
// verdict reads the same wherever it is seen. Pure: lines with a kind and
// toned spans; each sink decides what to show and how to colour it. What the
// agent and the tests wrote (file names, comments, messages, commands,
// output, warnings) is redacted and escaped here (src/text), once for all.
import type { EventOf, IterationOutcome, JobEvent, RunnerStage } from '../model/event.js';
import type { TestResult } from '../model/job.js';
import { type AskOutcome, waitText } from '../model/permission-ask.js';
import { visibleLine } from '../text/sanitize.js';
import { shownLine, shownText } from '../text/shown.js';

/** How a span may be coloured (the CLI colours, the pane may not). */
export type Tone = 'stage' | 'good' | 'bad' | 'warn';
export interface Span {
  text: string;
  tone?: Tone;
}

/**
 * stage: where the job is now (the CLI's live status line).
 * fact: what the job recorded (a change, an iteration, tests, a verdict, a commit).
 * detail: what only a full log shows (a test command and its exit, an agent starting, the end).
 * warning: something went wrong that the job survived.
 */
export type LineKind = 'stage' | 'fact' | 'detail' | 'warning';
export interface EventLine {
  kind: LineKind;
  spans: Span[];
}

export const STAGE_LABEL: Record<RunnerStage, string> = {
  implementing: 'implementing',
  testing: 'testing',
  reviewing: 'reviewing',
  committing: 'committing',
  'project-review': 'project review',
};

const OUTCOME_TEXT: Record<IterationOutcome, string> = {
  tests_failed: 'ends: tests failed',
  changes_requested: 'ends: changes requested',
  committed: 'ends: committed',
  job_ended: 'ends with the job',
};

const ASK_OUTCOME_TEXT: Record<AskOutcome, string> = {
  allow: 'allowed',
  'allow-always': 'allowed always (for this job)',
  reject: 'rejected',
  timeout: 'rejected: no answer',
  cancelled: 'request cancelled',
};

/** Lines of a failing test's output tail shown under its exit line. */
export const TAIL_LINES = 10;

const short = (sha: string) => visibleLine(sha.slice(0, 10));
/** The first non-blank line, shown (the whole text is redacted first: a key block spans lines). */
const firstLine = (s: string) =>
  shownText(s)
    .split('\n')
    .find((l) => l.trim())
    ?.trim() ?? '';
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const line = (kind: LineKind, ...spans: (string | Span)[]): EventLine => ({
  kind,
  spans: spans.map((s) => (typeof s === 'string' ? { text: s } : s)),
});

/** "0.4s", "12s", "2m05s". */
function duration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

function iterationLines(e: EventOf<'iteration:started'>): EventLine[] {
  const files = e.files;
  const names = files
    .slice(0, 5)
    .map((f) => visibleLine(f.path))
    .join(', ');
  const it = line(
    'fact',
    `  iteration ${e.iteration}: commit ${short(e.commit_id)} (${files.length} file${files.length === 1 ? '' : 's'}: ${names}${files.length > 5 ? ', …' : ''})`,
  );
  // A change is shown with its first iteration: the one the agent leaves
  // empty (the pass that leads to the project review) is on the record, with
  // no commit, but is no change made, so it gets no line.
  return e.iteration === 1
    ? [line('fact', `change ${e.change_number}: ${visibleLine(e.change_id)}`), it]
    : [it];
}

/** "exited 2", or "timed out after 30 s" for a command the runner killed. */
const ended = (r: TestResult): string =>
  r.timed_out_after_s !== undefined ? `timed out after ${r.timed_out_after_s} s` : `exited ${r.exit_code}`;

function testEndLines(e: EventOf<'test_end'>): EventLine[] {
  const how = e.timed_out_after_s !== undefined ? ended(e) : `exit ${e.exit_code}`;
  const head = line('detail', `  ${how} (${shownLine(e.command)}, ${duration(e.duration_ms)})`);
  if (e.exit_code === 0 || !e.tail.trim()) return [head];
  const tail = shownText(e.tail).replace(/\n$/, '').split('\n').slice(-TAIL_LINES);
  return [head, ...tail.map((l) => line('detail', `  | ${l}`))];
}

function testsLine(e: EventOf<'tests'>): EventLine {
  if (e.passed)
    return line('fact', { text: `  tests passed (${plural(e.results.length, 'command')})`, tone: 'good' });
  const failed = e.results.filter((r) => r.exit_code !== 0);
  return line('fact', {
    text: `  tests failed: ${failed.map((r) => `\`${shownLine(r.command)}\` ${ended(r)}`).join(', ')}`,
    tone: 'bad',
  });
}

function reviewLine(e: EventOf<'review'>): EventLine {
  const { outcome, comments } = e.review;
  const c = firstLine(comments);
  const tone: Tone = outcome === 'ACCEPT' ? 'good' : outcome === 'ABANDON' ? 'bad' : 'warn';
  return line(
    'fact',
    `  ${e.project ? 'project review' : 'review'}: `,
    { text: outcome, tone },
    c ? ` — ${c}` : '',
  );
}

/** The lines an event reads as; [] for what is never shown line by line (output chunks, tracker entries). */
export function eventLines(e: JobEvent): EventLine[] {
  switch (e.type) {
    case 'stage':
      return [line('stage', { text: `→ ${STAGE_LABEL[e.to]}`, tone: 'stage' })];
    case 'iteration:started':
      return iterationLines(e);
    case 'iteration:completed':
      return [
        line(
          'detail',
          `  iteration ${e.iteration} of change ${e.change_number} ${OUTCOME_TEXT[e.outcome]} (${short(e.commit_id)})`,
        ),
      ];
    case 'agent_start':
      return [line('detail', `● agent: ${e.purpose}`)];
    case 'permission_asked':
      return [
        line('fact', {
          text: `  waiting for you: the agent asks to ${e.tool_kind === 'execute' || e.command ? 'run' : (e.tool_kind ?? 'do')} ${shownLine(e.command ?? e.title)}${e.paths.length ? ` (${e.paths.map(shownLine).join(', ')})` : ''}`,
          tone: 'warn',
        }),
      ];
    case 'permission_answered':
      return [
        line(
          'fact',
          `  ${ASK_OUTCOME_TEXT[e.outcome]} after ${waitText(e.waited_ms)}${e.note ? `: ${shownLine(e.note)}` : ''}`,
        ),
      ];
    case 'workspace':
      return [
        line(
          'detail',
          `  workspace ${e.created ? 'made' : 'reused'}: ${visibleLine(e.path)} (${duration(e.duration_ms)})`,
        ),
      ];
    case 'setup_start':
      return [line('fact', `  setup: ${shownLine(e.command)}`)];
    case 'setup_end':
      return e.exit_code === 0
        ? [line('detail', `  exit 0 (${shownLine(e.command)}, ${duration(e.duration_ms)})`)]
        : [
            line('fact', {
              text: `  setup failed: \`${shownLine(e.command)}\` ${ended(e)}`,
              tone: 'bad',
            }),
            ...shownText(e.tail)
              .replace(/\n$/, '')
              .split('\n')
              .filter((l) => l.trim())
              .slice(-TAIL_LINES)
              .map((l) => line('detail', `  | ${l}`)),
          ];
    case 'setup_reused':
      return [
        line(
          'fact',
          `  setup: ${visibleLine(e.dir)} from the checkout instead of \`${shownLine(e.command)}\` (${e.method}, ${duration(e.duration_ms)})`,
        ),
      ];
    case 'baseline':
      return e.passed
        ? [line('fact', { text: '  baseline: the tests pass on the untouched base', tone: 'good' })]
        : [
            line('fact', {
              text: `  baseline: the tests fail before any change: ${e.results
                .filter((r) => r.exit_code !== 0)
                .map((r) => `\`${shownLine(r.command)}\` ${ended(r)}`)
                .join(', ')}`,
              tone: 'warn',
            }),
          ];
    case 'test_start':
      return [line('detail', `$ ${shownLine(e.command)}`)];
    case 'test_end':
      return testEndLines(e);
    case 'tests':
      return [testsLine(e)];
    case 'review':
      return [reviewLine(e)];
    case 'committed': {
      const m = firstLine(e.message);
      return [line('fact', `  committed ${short(e.commit_id)}${m ? `: ${m}` : ''}`)];
    }
    case 'info':
      return [line('detail', `  ${shownText(e.message)}`)];
    case 'warning':
      return [line('warning', shownText(e.message))];
    case 'finished':
      return [line('detail', `■ job ${e.status}${e.reason ? `: ${shownText(e.reason)}` : ''}`)];
    case 'change_started':
    case 'file_change':
    case 'test_output':
    case 'output':
      return [];
  }
}

/** A line's text without colour. */
export const plainText = (l: EventLine): string => l.spans.map((s) => s.text).join('');

/** A line as the live pane and `ii job logs` show it: warnings marked with "!". */
export const logText = (l: EventLine): string => (l.kind === 'warning' ? `! ${plainText(l)}` : plainText(l));
