// journal.json: what a job did, in one file a person or a program can read
// without the database. The keys and nesting are the journal-v2 spec's final
// schema, so a program written against the spec reads it unchanged; what we
// know beyond it (usage, the todo's id, per-section sources, ...) is extra
// keys. A fact that depends on a file or on git and could not be had is null
// (or zero) and `warnings` says why; `extraction` and `sources` say where
// each part came from.
import { z } from 'zod';
import { AgentPurpose, JobLanded, JobStage, JobStatus, Usage } from '../model/job.js';

/**
 * The journal spec's version (journal-v2, "Updated Schema (FINAL)"): the
 * spec's keys keep their names and meaning; what we add is extra keys only.
 */
export const JOURNAL_SCHEMA_VERSION = '1.0';

export const TerminalState = z.enum(['complete', 'stopped', 'running', 'unknown']);
export type TerminalState = z.infer<typeof TerminalState>;

/** The job's stage, as its record has it (the project review is the reviewing stage). */
export const Phase = JobStage;
export type Phase = z.infer<typeof Phase>;

/** The todo the job worked on (the spec's task). */
export const Task = z.object({
  /** Todos live in the state database, not in a file: always null. */
  path: z.null(),
  /** sha256 of the todo's description. */
  sha256: z.string().nullable(),
  title: z.string().nullable(),
  /** The todo's description. */
  goal: z.string().nullable(),
  /** Addition: the todo's id. */
  todo_id: z.string(),
});
export type Task = z.infer<typeof Task>;

/** The spec's identity keys, which sit at the top level of the journal. */
export const Identity = z.object({
  /** The job's id. */
  run_id: z.string(),
  /** The repository's root on disk, when known. */
  repo_root: z.string().nullable(),
  base_sha: z.string().nullable(),
  /** The head of the job's accepted work (the base when nothing was accepted). */
  head_sha: z.string().nullable(),
  task: Task,
  /** Addition: the repo slug the job is stored under. */
  repo: z.string(),
});
export type Identity = z.infer<typeof Identity>;

export const Status = z.object({
  phase: Phase,
  terminal_state: TerminalState,
  stop_reason: z.string().nullable(),
  /** ended_at − started_at from the stored times, in whole seconds (rounded); null while the job has no end. */
  duration_seconds: z.number().nullable(),
  timestamps: z.object({ started_at: z.string().nullable(), ended_at: z.string().nullable() }),
  /** Addition: the job record's status. */
  job_status: JobStatus,
  /** Addition: where `ii job land` put the job's commits; null until landed. */
  landed: JobLanded.nullable().default(null),
  /** Addition: time the job's permission requests waited for a person ([agent] permissions), whole seconds. */
  waited_seconds: z.number().default(0),
  /** Addition: duration_seconds without waited_seconds, the job's own (agent and tests) time; null with no duration. */
  working_seconds: z.number().nullable().default(null),
});
export type Status = z.infer<typeof Status>;

/** A job's milestones are its changes. */
export const Milestones = z.object({
  /** Changes with at least one iteration commit. */
  attempted: z.number().int(),
  total: z.number().int(),
  /**
   * Changes that passed the final verify, the project review: the accepted
   * changes of a completed job; 0 for a stopped run, as the spec has it, and
   * for one still running.
   */
  verified: z.number().int(),
  /** Addition: changes whose own review accepted them, whatever became of the job. */
  accepted: z.number().int(),
  /** Addition: iterations over all changes. */
  iterations: z.number().int(),
});
export type Milestones = z.infer<typeof Milestones>;

export const Checkpoint = z.object({
  /** The change (0-based) whose accepted commit this is; its position when no change has it. */
  milestone_index: z.number().int(),
  /** The commit's subject. */
  title: z.string(),
  sha: z.string(),
  /** Committer time, ISO 8601. */
  created_at: z.string(),
});
export type Checkpoint = z.infer<typeof Checkpoint>;

export const Checkpoints = z.object({
  created: z.number().int(),
  list: z.array(Checkpoint),
  last_sha: z.string().nullable(),
});
export type Checkpoints = z.infer<typeof Checkpoints>;

export const LastFailure = z.object({
  command: z.string(),
  exit_code: z.number().int(),
  /** The command's last 60 output lines, at most 5 KB, secrets redacted; '' when the log has none (a warning says why). */
  error_excerpt: z.string(),
  /** The event log holding the full output. */
  log_path: z.string(),
});
export type LastFailure = z.infer<typeof LastFailure>;

/** Test runs (all test commands of one iteration), not single commands. */
export const Verification = z.object({
  summary: z.object({
    attempts_total: z.number().int(),
    attempts_passed: z.number().int(),
    attempts_failed: z.number().int(),
    total_duration_seconds: z.number(),
  }),
  last_failure: LastFailure.nullable(),
});
export type Verification = z.infer<typeof Verification>;

export const FileTotal = z.object({
  path: z.string(),
  insertions: z.number().int(),
  deletions: z.number().int(),
});
export type FileTotal = z.infer<typeof FileTotal>;

/** The accepted work, base..head; each fact null (with a warning) when git could not tell it. */
export const ChangesSummary = z.object({
  base_sha: z.string().nullable(),
  head_sha: z.string().nullable(),
  files_changed: z.number().int().nullable(),
  insertions: z.number().int().nullable(),
  deletions: z.number().int().nullable(),
  /** The most changed files (insertions + deletions), at most TOP_FILES. */
  top_files: z.array(FileTotal).nullable(),
  /** `git diff --stat` of base..head (a bounded number of file lines and the summary). */
  diff_stat: z.string().nullable(),
});
export type ChangesSummary = z.infer<typeof ChangesSummary>;

export const NextAction = z.object({
  title: z.string(),
  command: z.string(),
  why: z.string(),
});
export type NextAction = z.infer<typeof NextAction>;

export const Note = z.object({ ts: z.string(), text: z.string() });
export type Note = z.infer<typeof Note>;

export const Notes = z.object({
  count: z.number().int(),
  path: z.string(),
  /** Addition: the latest notes (at most RECENT_NOTES), secrets redacted. */
  recent: z.array(Note),
});
export type Notes = z.infer<typeof Notes>;

export const StageUsage = Usage.extend({ sessions: z.number().int() });
export type StageUsage = z.infer<typeof StageUsage>;

export const UsageSection = z.object({
  /** Per agent-session purpose, from the sessions that recorded their usage. */
  by_stage: z.partialRecord(AgentPurpose, StageUsage),
  /** The job's total (the store adds every turn). */
  total: Usage,
  /** total − the stages' sum: turns whose session recorded no usage of its own. */
  unattributed: Usage,
});
export type UsageSection = z.infer<typeof UsageSection>;

/** The spec's provenance, with exactly its values. */
export const Extraction = z.object({
  checkpoints: z.enum(['git_log_v1', 'none']),
  verification: z.enum(['timeline_v1', 'none']),
  next_action: z.enum(['stop_json', 'derived', 'none']),
});
export type Extraction = z.infer<typeof Extraction>;

/** Addition: where each part came from, in words ("job record", "git log base..head", ... or "none"). */
export const Sources = z.object({
  identity: z.string(),
  status: z.string(),
  milestones: z.string(),
  checkpoints: z.string(),
  verification: z.string(),
  last_failure: z.string(),
  changes: z.string(),
  next_action: z.string(),
  notes: z.string(),
  resumed_from: z.string(),
  usage: z.string(),
});
export type Sources = z.infer<typeof Sources>;

export const ResumedFrom = z.object({
  /** The job this one retried. */
  run_id: z.string(),
  /** The commit this job started from. */
  checkpoint_sha: z.string(),
});
export type ResumedFrom = z.infer<typeof ResumedFrom>;

export const FileStamp = z.object({ size: z.number(), mtime_ms: z.number() });
export type FileStamp = z.infer<typeof FileStamp>;

/**
 * What the journal was built from; a journal whose recorded inputs equal the
 * current ones is reused, anything else rebuilds it.
 */
export const InputFingerprint = z.object({
  job_updated_at: z.string(),
  /** sha256 of the job record without its heartbeat (which moves every few seconds). */
  job_sha256: z.string(),
  /** A running job whose runner died turns from running to unknown without a record change. */
  stale: z.boolean(),
  events: FileStamp.nullable(),
  notes: FileStamp.nullable(),
  stop: FileStamp.nullable(),
});
export type InputFingerprint = z.infer<typeof InputFingerprint>;

export const Journal = z.object({
  schema_version: z.literal(JOURNAL_SCHEMA_VERSION),
  generated_by: z.string(),
  generated_at: z.string(),
  ...Identity.shape,
  status: Status,
  milestones: Milestones,
  checkpoints: Checkpoints,
  verification: Verification,
  changes: ChangesSummary,
  next_action: NextAction.nullable(),
  notes: Notes,
  resumed_from: ResumedFrom.nullable(),
  extraction: Extraction,
  warnings: z.array(z.string()),
  /** Additions. */
  usage: UsageSection,
  sources: Sources,
  inputs: InputFingerprint,
});
export type Journal = z.infer<typeof Journal>;

export const TOP_FILES = 10;
export const RECENT_NOTES = 10;
