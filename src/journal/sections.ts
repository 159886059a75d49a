// The journal's sections, one pure function each: inputs in, the section (or
// null), where it came from, and the warnings explaining any gap out.
import { createHash } from 'node:crypto';
import { changesMade, isChangeComplete } from '../model/derive.js';
import { subtractUsage, usageByStage } from '../model/usage.js';
import type { Job, JobCommit, TestResult } from '../model/job.js';
import type { JobEvent } from '../model/event.js';
import { eventsFile } from '../state/paths.js';
import { excerpt } from './excerpt.js';
import type { Head, JournalInputs } from './inputs.js';
import { redact } from '../text/redact.js';
import type {
  Identity,
  LastFailure,
  Milestones,
  NextAction,
  Notes,
  Status,
  TerminalState,
  UsageSection,
  Verification,
} from './schema.js';
import { RECENT_NOTES } from './schema.js';
import { notesFile } from './files.js';

export interface Section<T> {
  value: T;
  source: string;
  warnings: string[];
}
const section = <T>(value: T, source: string, warnings: string[] = []): Section<T> => ({
  value,
  source,
  warnings,
});

const short = (sha: string): string => sha.slice(0, 12);

const allCommits = (job: Job): JobCommit[] => job.changes.flatMap((c) => c.commits);

/**
 * The head of the accepted work: the final commit of the last accepted change
 * (the job record keeps it since the commit stage rewrites the iteration), or
 * for records from before that, the commit the runner's last commit stage
 * logged (its `committed` event); the base when nothing was accepted.
 */
export function acceptedHead(job: Job, events: JobEvent[] | null): Head {
  const accepted = job.changes.filter(isChangeComplete);
  const verified = accepted.length;
  if (verified === 0) {
    return job.base_rev
      ? { sha: job.base_rev, source: 'job record (base: nothing accepted)' }
      : { unknown: 'the job record has no base revision' };
  }
  const final = accepted.at(-1)?.commits.at(-1);
  if (final?.iteration_commit_id) return { sha: final.commit_id, source: 'job record (final commit)' };
  if (!events)
    return {
      unknown: `the job accepted ${verified} change${verified === 1 ? '' : 's'}, but without the event log the commits are unknown`,
    };
  const committed = events.filter((e) => e.type === 'committed').at(-1);
  if (!committed)
    return {
      unknown: `the job accepted ${verified} change${verified === 1 ? '' : 's'}, but the event log records no commit`,
    };
  return { sha: committed.commit_id, source: 'events (last commit stage)' };
}

export function identity(i: JournalInputs): Section<Identity> {
  const { job, todo } = i;
  const warnings: string[] = [];
  if (!todo) warnings.push(`todo ${job.todo_id} is not in the store: its title and description are unknown`);
  if (!i.repoRoot) warnings.push('the repository root is unknown (not given, and the workspace is gone)');
  return section(
    {
      run_id: job.id,
      repo_root: i.repoRoot,
      base_sha: job.base_rev,
      head_sha: 'sha' in i.head ? i.head.sha : null,
      task: {
        path: null,
        sha256: todo ? createHash('sha256').update(todo.description).digest('hex') : null,
        title: todo?.title ?? null,
        goal: todo ? redact(todo.description) : null,
        todo_id: job.todo_id,
      },
      repo: job.repo,
    },
    'source' in i.head ? `job record + ${i.head.source}` : 'job record',
    warnings,
  );
}

export function status(i: JournalInputs): Section<Status> {
  const { job } = i;
  const warnings: string[] = [];
  const stop = i.stop.state === 'ok' ? i.stop.value : null;
  const terminal: TerminalState =
    job.status === 'completed'
      ? 'complete'
      : job.status === 'active'
        ? i.stale
          ? 'unknown'
          : 'running'
        : 'stopped';
  let reason: string | null;
  if (job.status === 'failed' || job.status === 'abandoned')
    reason = job.failure_reason ?? stop?.reason ?? (job.status === 'abandoned' ? 'abandoned' : null);
  else if (terminal === 'unknown')
    reason =
      stop?.reason ??
      `the runner is gone (pid ${job.pid ?? 'N/A'} on ${job.host ?? 'N/A'}, last heartbeat ${job.heartbeat_at ?? 'never'})`;
  else reason = stop?.reason ?? null;
  const ended = job.status === 'active' ? null : job.completed_at;
  if (job.status !== 'active' && !ended)
    warnings.push(`the job is ${job.status} but its record has no completion time: duration unknown`);
  const ms = ended ? Date.parse(ended) - Date.parse(job.started_at) : NaN;
  return section(
    {
      // The record's stage, in the specs' words: the project review is the
      // reviewing stage (job-change-tracking.md), where a completed job ended.
      phase: job.stage,
      terminal_state: terminal,
      stop_reason: reason === null ? null : redact(reason),
      // Whole seconds, as the spec computes it (journal-v2, Fixes Applied 9: Math.round).
      duration_seconds: Number.isFinite(ms) && ms >= 0 ? Math.round(ms / 1000) : null,
      timestamps: { started_at: job.started_at, ended_at: ended },
      job_status: job.status,
      landed: job.landed,
      waited_seconds: Math.round(job.waited_ms / 1000),
      working_seconds:
        Number.isFinite(ms) && ms >= 0 ? Math.max(0, Math.round((ms - job.waited_ms) / 1000)) : null,
    },
    stop?.reason && reason === stop.reason ? 'job record + stop file' : 'job record',
    warnings,
  );
}

/**
 * A job with no changes and no agent session never ran the change loop: a
 * record from before changes were tracked (its zeros are unknowns, and a
 * warning says so). One whose agents ran and changed nothing has honest zeros.
 */
const untracked = (job: Job): boolean =>
  job.changes.length === 0 && job.agent_sessions.length === 0 && job.status !== 'active';

export function milestones(job: Job): Section<Milestones> {
  if (untracked(job))
    return section({ attempted: 0, total: 0, verified: 0, accepted: 0, iterations: 0 }, 'none', [
      'the job record has no changes and no agent sessions (a record from before changes were tracked): milestones are N/A',
    ]);
  const accepted = job.changes.filter(isChangeComplete).length;
  return section(
    {
      attempted: job.changes.filter((c) => c.commits.length > 0).length,
      // A completed job's last pass found nothing to change: the change it
      // left with no commit was no milestone (job-change-tracking.md).
      total: job.status === 'completed' ? changesMade(job) : job.changes.length,
      // The spec's final verify is our project review, which only a
      // completed job passed: "0 for stopped runs" (journal-v2, Fixes
      // Applied 1), and for one still running, which has not had it yet.
      verified: job.status === 'completed' ? accepted : 0,
      accepted,
      iterations: allCommits(job).length,
    },
    'job record',
  );
}

/** Where the output of the failing command of the last failed run is in the event log. */
function failureOutput(events: JobEvent[], command: string, exitCode: number | null): string | null {
  let end = -1;
  for (let k = events.length - 1; k >= 0; k--) {
    const e = events[k]!;
    if (
      e.type === 'test_end' &&
      e.command === command &&
      (exitCode === null ? e.exit_code !== 0 : e.exit_code === exitCode)
    ) {
      end = k;
      break;
    }
  }
  if (end < 0) return null;
  let start = end;
  const startsRun = (e: JobEvent) => e.type === 'test_start' && e.command === command;
  while (start > 0 && !startsRun(events[start]!)) start--;
  return events
    .slice(start, end)
    .map((e) => (e.type === 'test_output' && e.command === command ? e.text : ''))
    .join('');
}

const NO_RUNS = { attempts_total: 0, attempts_passed: 0, attempts_failed: 0, total_duration_seconds: 0 };

/** sources.last_failure when the failing command is known but the log holds none of its output. */
export const NO_OUTPUT_LOGGED = 'events (no output logged)';

/** One verification attempt: a run of every test command. */
interface TestRun {
  passed: boolean;
  results: TestResult[];
}

/**
 * Verification attempts are counted from the event log's `tests` events (the
 * spec's timeline `verification` events: one a run, its every command's
 * result), so `extraction.verification` says timeline_v1 and
 * `sources.verification` says events; a log that is gone or predates them
 * leaves the job record's test runs (the same figures, written at the same
 * moment), and both then say it was not the timeline.
 */
export function verification(i: JournalInputs): Section<Verification> & { failureSource: string } {
  const { job, stateDir } = i;
  const events = i.events.state === 'ok' ? i.events.value : null;
  const logged: TestRun[] = (events ?? []).flatMap((e) =>
    e.type === 'tests' ? [{ passed: e.passed, results: e.results }] : [],
  );
  const recorded: TestRun[] = allCommits(job)
    .filter((c) => c.tests_passed !== null)
    .map((c) => ({ passed: c.tests_passed === true, results: c.test_results }));
  const fromLog = logged.length > 0;
  const runs = fromLog ? logged : recorded;
  const warnings: string[] = [];
  if (runs.length === 0 && untracked(job))
    return {
      ...section({ summary: NO_RUNS, last_failure: null }, 'none', [
        'the job record has no test runs (a record from before changes were tracked)',
      ]),
      failureSource: 'none',
    };
  const source = fromLog
    ? 'events (tests)'
    : runs.length === 0
      ? 'none (no test runs)'
      : `job record (${events ? 'the event log has no tests events' : 'no event log'})`;
  const lastFailed = runs.filter((r) => !r.passed).at(-1);
  let last: LastFailure | null = null;
  let failureSource = 'none';
  if (lastFailed) {
    const failing = lastFailed.results.find((r) => r.exit_code !== 0);
    let command = failing?.command ?? null;
    let exitCode = failing?.exit_code ?? null;
    if (!command && events) {
      // An old record without per-command results: the event log still knows.
      const end = events.flatMap((e) => (e.type === 'test_end' && e.exit_code !== 0 ? [e] : [])).at(-1);
      if (end) {
        command = end.command;
        exitCode = end.exit_code;
      }
    }
    if (!command) {
      warnings.push(
        'the last test run failed, but neither the job record nor the event log says which command',
      );
    } else {
      const output = events ? failureOutput(events, command, exitCode) : null;
      if (!events)
        warnings.push(
          `no output excerpt for the failing command "${redact(command)}": the event log could not be read`,
        );
      else if (output === null)
        warnings.push(`the event log has no output of the failing command "${redact(command)}"`);
      last = {
        command: redact(command),
        exit_code: exitCode ?? 1,
        error_excerpt: output === null ? '' : excerpt(output),
        log_path: eventsFile(stateDir, job.id),
      };
      failureSource =
        output === null
          ? fromLog
            ? NO_OUTPUT_LOGGED
            : 'job record'
          : fromLog || !failing
            ? 'events'
            : 'job record + events';
    }
  }
  const passed = runs.filter((r) => r.passed).length;
  return {
    ...section(
      {
        summary: {
          attempts_total: runs.length,
          attempts_passed: passed,
          attempts_failed: runs.length - passed,
          total_duration_seconds:
            runs.reduce((n, r) => n + r.results.reduce((m, t) => m + t.duration_ms, 0), 0) / 1000,
        },
        last_failure: last,
      },
      source,
      warnings,
    ),
    failureSource,
  };
}

export function nextAction(i: JournalInputs, st: Status, head: Head): Section<NextAction | null> {
  const { job } = i;
  if (i.stop.state === 'ok' && i.stop.value.next_action) {
    const n = i.stop.value.next_action;
    return section(
      { title: n.title, command: redact(n.command ?? `ii job show ${job.id}`), why: redact(n.why) },
      'stop file',
    );
  }
  const retry = `ii job retry ${job.id}`;
  const why = (prefix: string) => (st.stop_reason ? `${prefix}: ${st.stop_reason}` : prefix);
  let next: NextAction;
  switch (st.terminal_state) {
    case 'complete': {
      const range =
        job.base_rev && 'sha' in head && head.sha !== job.base_rev
          ? `git log --stat ${short(job.base_rev)}..${short(head.sha)}`
          : null;
      next = {
        title: range ? 'Review the accepted commits and merge them' : 'Nothing to merge: close the todo',
        command: range ?? `ii todo show ${job.todo_id}`,
        why: range
          ? 'the project review accepted the job'
          : 'the project review accepted the job without any accepted change',
      };
      break;
    }
    case 'running':
      next = {
        title: 'Watch the job',
        command: `ii job show ${job.id}`,
        why: `it is still running (${st.phase})`,
      };
      break;
    case 'unknown':
      next = { title: 'Retry the job', command: retry, why: why('its runner stopped without finishing it') };
      break;
    default:
      next =
        job.status === 'abandoned'
          ? {
              title: 'Decide whether the todo is still wanted, then retry it or close it',
              command: `ii todo show ${job.todo_id}`,
              why: why('the job was abandoned'),
            }
          : { title: 'Retry the job', command: retry, why: why('the job failed') };
  }
  return section(next, 'derived from the status');
}

export function notes(i: JournalInputs): Section<Notes> {
  const path = notesFile(i.stateDir, i.job.id);
  if (i.notes.state === 'missing') return section({ count: 0, path, recent: [] }, 'none (no notes yet)');
  if (i.notes.state === 'error')
    return section({ count: 0, path, recent: [] }, 'none', [
      `the notes could not be read (count 0 is unknown): ${i.notes.error}`,
    ]);
  const { notes: all, skipped } = i.notes.value;
  const warnings =
    skipped > 0
      ? [
          `${skipped} line${skipped === 1 ? '' : 's'} of ${path} ${skipped === 1 ? 'is' : 'are'} not a note and ${skipped === 1 ? 'was' : 'were'} skipped`,
        ]
      : [];
  return section(
    {
      count: all.length,
      path,
      recent: all.slice(-RECENT_NOTES).map((n) => ({ ts: n.ts, text: redact(n.text) })),
    },
    'notes file',
    warnings,
  );
}

export function usage(job: Job): Section<UsageSection> {
  const { by, attributed, recorded } = usageByStage(job.agent_sessions);
  const n = job.agent_sessions.length;
  return section(
    { by_stage: by, total: job.usage, unattributed: subtractUsage(job.usage, attributed) },
    n === 0
      ? 'job record'
      : `job record (${recorded} of ${n} agent session${n === 1 ? '' : 's'} recorded their own usage)`,
  );
}
