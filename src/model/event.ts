// The job's event stream: what the runner reports as it works, and exactly
// what jobs/<id>/events.jsonl holds, one event a line. One discriminated
// union, so the CLI's progress, `ii job logs`, the dashboard's live pane in
// any process and the journal all read the same typed facts. A line read back
// that does not match is skipped with a warning, never trusted.
//
// To log a new kind of fact, add a member here (and its lines in
// src/job-log/event-text.ts); `output` carries any command output that is not a
// test's (setup steps, hooks) under a `source` name.
import { z } from 'zod';
import { JOB_STAGES } from './enums.js';
import { AgentPurpose, FileChange, JobReview, TestResult } from './job.js';
import { AskOutcome } from './permission-ask.js';

/** The stage shown to people: the job's stage, or the project review (stored as reviewing). */
export const RUNNER_STAGES = [...JOB_STAGES, 'project-review'] as const;
export const RunnerStage = z.enum(RUNNER_STAGES);

/** How an iteration ended. */
export const ITERATION_OUTCOMES = ['tests_failed', 'changes_requested', 'committed', 'job_ended'] as const;
export type IterationOutcome = (typeof ITERATION_OUTCOMES)[number];
export type RunnerStage = z.infer<typeof RunnerStage>;

const event = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.object({ ts: z.string(), type: z.literal(type), ...shape });

const Stream = z.enum(['stdout', 'stderr']);

export const EVENT_SCHEMAS = [
  event('stage', { from: RunnerStage.nullable(), to: RunnerStage }),
  /** A change was opened in the vcs (recorded on the job once an implement pass changes something). */
  event('change_started', { change_id: z.string(), number: z.number().int() }),
  /**
   * An implement pass was recorded as an iteration of a change: its commit
   * and files (the iteration-history spec's lifecycle event; the iteration's
   * before-snapshot is on the job record).
   */
  event('iteration:started', {
    change_id: z.string(),
    /** 1-based position of the change in the job. */
    change_number: z.number().int(),
    iteration: z.number().int(),
    commit_id: z.string(),
    files: z.array(FileChange).default([]),
  }),
  /**
   * The iteration is over and its after-snapshot taken: the tests failed,
   * the review asked for changes, it was committed (commit_id is then the
   * final commit), or the job ended while it was open.
   */
  event('iteration:completed', {
    change_id: z.string(),
    change_number: z.number().int(),
    iteration: z.number().int(),
    commit_id: z.string(),
    outcome: z.enum(ITERATION_OUTCOMES),
  }),
  event('agent_start', { purpose: AgentPurpose, agent_session_id: z.string() }),
  /** A permission request went to a person ([agent] permissions): the job waits (model/permission-ask.ts). */
  event('permission_asked', {
    ask_id: z.number().int(),
    tool_kind: z.string().nullable().default(null),
    title: z.string().default(''),
    command: z.string().nullable().default(null),
    paths: z.array(z.string()).default([]),
  }),
  /** It was answered, timed out or cancelled, after waiting `waited_ms`. */
  event('permission_answered', {
    ask_id: z.number().int(),
    outcome: AskOutcome,
    note: z.string().nullable().default(null),
    waited_ms: z.number().nonnegative().default(0),
  }),
  /** The job's workspace, ready at its base: made (git worktree add) or a free one reset. */
  event('workspace', { path: z.string(), created: z.boolean(), duration_ms: z.number() }),
  /** From the file tracker, live, as the agent edits. */
  event('file_change', FileChange.shape),
  /** [workspace] setup, before the first prompt or after a lockfile changed (its output: `output`, source "setup"). */
  event('setup_start', { command: z.string() }),
  event('setup_end', { ...TestResult.shape, tail: z.string().default('') }),
  /** A setup command replaced by a clone of the checkout's dependencies. */
  event('setup_reused', {
    command: z.string(),
    dir: z.string(),
    method: z.string(),
    duration_ms: z.number(),
  }),
  /** The test commands on the untouched base, before the first prompt (their test_* events say baseline). */
  event('baseline', { passed: z.boolean(), results: z.array(TestResult) }),
  event('test_start', { command: z.string(), baseline: z.boolean().optional() }),
  /** Output chunks of a test command, in order. */
  event('test_output', {
    command: z.string(),
    stream: Stream,
    text: z.string(),
    baseline: z.boolean().optional(),
  }),
  event('test_end', {
    ...TestResult.shape,
    baseline: z.boolean().optional(),
    /** The last lines of the command's output (stdout and stderr as they came). */
    tail: z.string().default(''),
  }),
  /** A whole test run: every command's result. */
  event('tests', { passed: z.boolean(), results: z.array(TestResult) }),
  event('review', { project: z.boolean(), review: JobReview }),
  /** The commit stage's result: the accepted commit of a change. */
  event('committed', { change_id: z.string(), commit_id: z.string(), message: z.string().default('') }),
  /** Output of a command other than a test (named by source, e.g. "setup"). */
  event('output', { source: z.string(), stream: Stream.default('stdout'), text: z.string() }),
  event('info', { message: z.string() }),
  event('warning', {
    message: z.string(),
    /** An agent's warning (what its session refused it or skipped): its transcript holds it too. */
    agent_session_id: z.string().optional(),
  }),
  /** The job reached a terminal state. */
  event('finished', {
    status: z.enum(['completed', 'failed', 'abandoned']),
    reason: z.string().nullable().default(null),
  }),
] as const;

/**
 * Event logs written before the stream was one union, read as today's
 * events: the end of a job was a `stage` with a status, the project review a
 * `stage` flagged project_review, a commit an `info` with a commit_id (and,
 * briefly, an iteration's start was `iteration`).
 */
function fromLegacy(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  const e = v as Record<string, unknown>;
  if (e.type === 'stage' && typeof e.status === 'string')
    return { ts: e.ts, type: 'finished', status: e.status, reason: e.reason ?? null };
  if (e.type === 'stage' && e.project_review === true && e.to === 'reviewing')
    return { ...e, to: 'project-review' };
  if (e.type === 'info' && typeof e.commit_id === 'string')
    return { ts: e.ts, type: 'committed', change_id: e.change_id ?? '', commit_id: e.commit_id, message: '' };
  if (e.type === 'error') return { ...e, type: 'warning' };
  if (e.type === 'iteration') return { ...e, type: 'iteration:started' };
  return v;
}

export const JobEvent = z.preprocess(fromLegacy, z.discriminatedUnion('type', EVENT_SCHEMAS));
export type JobEvent = z.output<typeof JobEvent>;
export type JobEventType = JobEvent['type'];
export type EventOf<T extends JobEventType> = Extract<JobEvent, { type: T }>;

type WithoutTs<T> = T extends unknown ? Omit<T, 'ts'> : never;
/** An event before it is stamped and logged. */
export type NewJobEvent = WithoutTs<JobEvent>;
/** What an event of a type holds besides ts and type (fields with a default may be left out). */
export type EventData<T extends JobEventType> = Omit<
  Extract<z.input<(typeof EVENT_SCHEMAS)[number]>, { type: T }>,
  'ts' | 'type'
>;
