import { z } from 'zod';
import { JOB_STAGES, JOB_STATUSES } from './enums.js';
import { PermissionAsk } from './permission-ask.js';
import { ZERO_USAGE } from './zero-usage.js';

/** Where an active job is in its loop (README, "Running a job"; src/job/runner.ts). */
export const JobStage = z.enum(JOB_STAGES);
export type JobStage = z.infer<typeof JobStage>;

export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

export const ReviewOutcome = z.enum(['ACCEPT', 'REQUEST_CHANGES', 'ABANDON']);
export type ReviewOutcome = z.infer<typeof ReviewOutcome>;

/** What an agent session was started for. */
export const AgentPurpose = z.enum(['implement', 'review', 'project-review', 'commit-message']);
export type AgentPurpose = z.infer<typeof AgentPurpose>;

/** Tokens and cost; every field defaults to 0 so old records stay valid. */
export const Usage = z.object({
  input_tokens: z.number().int().nonnegative().default(0),
  output_tokens: z.number().int().nonnegative().default(0),
  /**
   * In the agent's currency, normally USD, rounded to the micro-dollar: stored
   * as whole micro-dollars and summed as such (src/model/usage.ts).
   */
  cost: z.number().nonnegative().default(0),
});
export type Usage = z.infer<typeof Usage>;

export const JobReview = z.object({
  outcome: ReviewOutcome,
  comments: z.string().default(''),
  agent_session_id: z.string().nullable().default(null),
  reviewed_at: z.string(),
});
export type JobReview = z.infer<typeof JobReview>;

/**
 * A file the agent touched in one iteration: `path` relative to the
 * workspace, `abs_path` the same file's absolute path (the file-tracking
 * spec's FileChange.AbsPath), null in records made before it was kept and
 * the job's workspace was not known.
 */
export const FileChange = z.object({
  path: z.string(),
  abs_path: z.string().nullable().default(null),
  is_new: z.boolean().default(false),
  is_deleted: z.boolean().default(false),
  additions: z.number().int().nonnegative().default(0),
  deletions: z.number().int().nonnegative().default(0),
});
export type FileChange = z.infer<typeof FileChange>;

/** One ACP session the runner opened, and where its transcript lives. */
export const AgentSessionRef = z.object({
  purpose: AgentPurpose,
  id: z.string(),
  transcript: z.string(),
  started_at: z.string().optional(),
  usage: Usage.optional(),
});
export type AgentSessionRef = z.infer<typeof AgentSessionRef>;

/** The state of a job around one iteration (the seed ADR's before/after snapshot). */
export const IterationSnapshot = z.object({
  stage: JobStage,
  status: JobStatus,
  files_created: z.array(z.string()).default([]),
  files_modified: z.array(z.string()).default([]),
  files_removed: z.array(z.string()).default([]),
  usage: Usage.default(ZERO_USAGE),
  artifact_count: z.number().int().nonnegative().default(0),
  taken_at: z.string(),
});
export type IterationSnapshot = z.infer<typeof IterationSnapshot>;

/** One test command's result in a test run. */
export const TestResult = z.object({
  command: z.string(),
  exit_code: z.number().int(),
  duration_ms: z.number().nonnegative().default(0),
  /** Set when the command ran past [job] test-timeout-seconds and its process group was ended. */
  timed_out_after_s: z.number().nonnegative().optional(),
});
export type TestResult = z.infer<typeof TestResult>;

/** One iteration of a change: the commit the agent's work produced. */
export const JobCommit = z.object({
  /**
   * The iteration's own stable id (the iteration-history spec's
   * IterationEntry.id): set when the iteration is recorded and never
   * changed, where commit_id changes when the commit stage rewrites it.
   * `ii job diff --from/--to` take it as well as change.iteration.
   */
  id: z.string().default(''),
  /**
   * The commit of this iteration; for the accepted iteration of a change,
   * after the commit stage, the final commit (the one with the final
   * message, which a user merges).
   */
  commit_id: z.string(),
  /**
   * The iteration's own commit once the commit stage rewrote it with the
   * final message (same tree and parent, new id); null until then. The
   * change's iteration ref (refs/incrementum/changes/<id>/<n>) points here.
   */
  iteration_commit_id: z.string().nullable().default(null),
  draft_message: z.string().default(''),
  /** null until the tests ran. */
  tests_passed: z.boolean().nullable().default(null),
  test_results: z.array(TestResult).default([]),
  review: JobReview.nullable().default(null),
  agent_session_id: z.string().nullable().default(null),
  created_at: z.string(),
  files: z.array(FileChange).default([]),
  usage: Usage.default(ZERO_USAGE),
  /** The feedback (test table or review comments) that started this iteration. */
  feedback: z.string().nullable().default(null),
  before: IterationSnapshot.nullable().default(null),
  after: IterationSnapshot.nullable().default(null),
  /**
   * The iteration's diff summary against the one before it (the
   * iteration-history spec's diffSummary), stored with the after-snapshot
   * when the iteration ends; null while it is open and in older records,
   * for which `ii job diff` computes it.
   */
  diff_summary: z.string().nullable().default(null),
});
export type JobCommit = z.infer<typeof JobCommit>;

/** A change keeps one stable id (a Change-Id trailer) across its iterations. */
export const JobChange = z.object({
  change_id: z.string(),
  commits: z.array(JobCommit).default([]),
  created_at: z.string(),
});
export type JobChange = z.infer<typeof JobChange>;

/** Where and when a job's commits were landed (`ii job land`). */
export const JobLanded = z.object({
  /** The branch that was advanced. */
  onto: z.string(),
  /** The branch's new tip: the job's last commit as rebased. */
  commit: z.string(),
  at: z.string(),
  /** False when --no-test skipped the test run on the rebased tip. */
  tested: z.boolean(),
});
export type JobLanded = z.infer<typeof JobLanded>;

/**
 * A landing stopped in a conflict (`[land] on-conflict = "stop"`): the rebase
 * waits in `worktree` for a person, who resolves it there and runs
 * `ii job land --continue`, or `--abort` to put the job back as it was.
 */
export const JobLandConflict = z.object({
  onto: z.string(),
  /** The target's tip the job's commits are being rebased onto. */
  tip: z.string(),
  /** The files git could not merge, as of the last stop. */
  files: z.array(z.string()),
  /** The landing worktree, left rebase-in-progress. */
  worktree: z.string(),
  at: z.string(),
  /** Whether the tests run on the rebased tip once it is resolved. */
  test: z.boolean(),
});
export type JobLandConflict = z.infer<typeof JobLandConflict>;

/**
 * A landing under way or refused, so the board can show it while another
 * process lands (`m` starts `ii job land` in the background): the step it is
 * at, or why it did not land. Cleared once the job lands.
 */
export const JobLanding = z.object({
  state: z.enum(['landing', 'refused']),
  onto: z.string(),
  /** What it is doing ('rebasing onto main', 'testing the rebased tip'), or the refusal's first line. */
  step: z.string(),
  at: z.string(),
  /** The landing process, so a landing whose process died is not shown as under way. */
  pid: z.number().int().nullable(),
  host: z.string().nullable(),
});
export type JobLanding = z.infer<typeof JobLanding>;

export const Job = z.object({
  id: z.string().min(1),
  repo: z.string(),
  todo_id: z.string(),
  session_id: z.string().nullable().default(null),
  stage: JobStage.default('implementing'),
  status: JobStatus.default('active'),
  feedback: z.string().nullable().default(null),
  agent_sessions: z.array(AgentSessionRef).default([]),
  /** Legacy jobs have none: everything derived from changes shows N/A for them. */
  changes: z.array(JobChange).default([]),
  project_review: JobReview.nullable().default(null),
  pid: z.number().int().nullable().default(null),
  host: z.string().nullable().default(null),
  heartbeat_at: z.string().nullable().default(null),
  base_rev: z.string().nullable().default(null),
  workspace_path: z.string().nullable().default(null),
  auto_commit: z.boolean().default(true),
  usage: Usage.default(ZERO_USAGE),
  started_at: z.string(),
  updated_at: z.string(),
  completed_at: z.string().nullable().default(null),
  failure_reason: z.string().nullable().default(null),
  /** The job this one retried, if any. */
  retried_from: z.string().nullable().default(null),
  /** The local branch the base came from (the landing target); null for older jobs or a bare sha. */
  base_branch: z.string().nullable().default(null),
  landed: JobLanded.nullable().default(null),
  /** Set while a landing is stopped in a conflict for a person to resolve. */
  land_conflict: JobLandConflict.nullable().default(null),
  /** The last landing's progress or refusal, until the job lands. */
  landing: JobLanding.nullable().default(null),
  /**
   * To land: started by a landing runner (ii run --land), so once completed
   * any landing runner lands it, even when the one that started it died.
   * Cleared when it lands, or when it ends without work to land; a refused
   * landing keeps it (with `landing` saying why), for a person to settle.
   */
  to_land: z.boolean().default(false),
  /**
   * The permission request waiting for a person's answer ([agent] permissions
   * = "ask"), null when none: an active job with one is shown as `waiting`.
   */
  asking: PermissionAsk.nullable().default(null),
  /** Total time the job's requests waited for a person (kept out of its agent time). */
  waited_ms: z.number().int().nonnegative().default(0),
});
export type Job = z.infer<typeof Job>;

/** Requests the dashboard or CLI leave for a runner in another process. */
export const ControlKind = z.enum(['abandon', 'retry']);
export type ControlKind = z.infer<typeof ControlKind>;
export const ControlRequest = z.object({
  id: z.number().int(),
  job_id: z.string(),
  kind: ControlKind,
  reason: z.string().default(''),
  created_at: z.string(),
  handled_at: z.string().nullable().default(null),
});
export type ControlRequest = z.infer<typeof ControlRequest>;
