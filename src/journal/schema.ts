// journal.json: what a job did, in one file a person or a program can read
// without the database. Every section that depends on a file or on git may be
// null; `warnings` then says why and `extraction` says where each section came
// from ("none" for a null one). Keys are snake_case like the rest of the model.
import { z } from 'zod';
import { AgentPurpose, JobStatus, Usage } from '../model/job.js';

/** Bumped when a key changes meaning or disappears (additions keep the version). */
export const JOURNAL_SCHEMA_VERSION = 1;

export const TerminalState = z.enum(['complete', 'stopped', 'running', 'unknown']);
export type TerminalState = z.infer<typeof TerminalState>;

/** The job's stage as people see it: the project review is stored as reviewing. */
export const Phase = z.enum(['implementing', 'testing', 'reviewing', 'committing', 'project-review']);
export type Phase = z.infer<typeof Phase>;

export const Identity = z.object({
  job_id: z.string(),
  /** The repo slug the job is stored under. */
  repo: z.string(),
  /** The repository's root on disk, when known. */
  repo_root: z.string().nullable(),
  base_commit: z.string().nullable(),
  /** The head of the job's accepted work (the base when nothing was accepted). */
  head_commit: z.string().nullable(),
  todo: z.object({
    id: z.string(),
    title: z.string().nullable(),
    description_sha256: z.string().nullable(),
  }),
});
export type Identity = z.infer<typeof Identity>;

export const Status = z.object({
  phase: Phase,
  job_status: JobStatus,
  terminal_state: TerminalState,
  stop_reason: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  /** ended_at − started_at from the stored times; null while the job has no end. */
  duration_seconds: z.number().nullable(),
});
export type Status = z.infer<typeof Status>;

export const Milestones = z.object({
  changes: z.object({
    /** Changes with at least one iteration commit. */
    attempted: z.number().int(),
    total: z.number().int(),
    /** Changes whose last review accepted them. */
    verified: z.number().int(),
  }),
  iterations: z.number().int(),
});
export type Milestones = z.infer<typeof Milestones>;

export const Checkpoint = z.object({
  sha: z.string(),
  /** Committer time, ISO 8601. */
  committed_at: z.string(),
  subject: z.string(),
});
export type Checkpoint = z.infer<typeof Checkpoint>;

export const Checkpoints = z.object({
  items: z.array(Checkpoint),
  last_sha: z.string().nullable(),
});
export type Checkpoints = z.infer<typeof Checkpoints>;

export const LastFailure = z.object({
  command: z.string(),
  exit_code: z.number().int(),
  /** The command's last 60 output lines, at most 5 KB, secrets redacted; null without the event log. */
  excerpt: z.string().nullable(),
  /** The event log holding the full output. */
  log_path: z.string().nullable(),
});
export type LastFailure = z.infer<typeof LastFailure>;

/** Test runs (all test commands of one iteration), not single commands. */
export const Verification = z.object({
  attempts_total: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  total_duration_ms: z.number(),
  last_failure: LastFailure.nullable(),
});
export type Verification = z.infer<typeof Verification>;

export const FileTotal = z.object({
  path: z.string(),
  insertions: z.number().int(),
  deletions: z.number().int(),
});
export type FileTotal = z.infer<typeof FileTotal>;

/** The accepted work, base..head. */
export const ChangesSummary = z.object({
  files_changed: z.number().int(),
  insertions: z.number().int(),
  deletions: z.number().int(),
  /** The most changed files (insertions + deletions), at most TOP_FILES. */
  top_files: z.array(FileTotal),
  /** `git diff --stat` of base..head (a bounded number of file lines and the summary). */
  diff_stat: z.string(),
});
export type ChangesSummary = z.infer<typeof ChangesSummary>;

export const NextAction = z.object({
  title: z.string(),
  command: z.string().nullable(),
  why: z.string(),
});
export type NextAction = z.infer<typeof NextAction>;

export const Note = z.object({ ts: z.string(), text: z.string() });
export type Note = z.infer<typeof Note>;

export const Notes = z.object({
  count: z.number().int(),
  path: z.string(),
  /** The latest notes (at most RECENT_NOTES), secrets redacted. */
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

/** Where a section came from: "job record", "events", "git", "stop file", "derived", ... or "none". */
export const Extraction = z.object({
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
export type Extraction = z.infer<typeof Extraction>;

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
  identity: Identity,
  status: Status,
  milestones: Milestones.nullable(),
  checkpoints: Checkpoints.nullable(),
  verification: Verification.nullable(),
  changes: ChangesSummary.nullable(),
  next_action: NextAction.nullable(),
  notes: Notes.nullable(),
  resumed_from: z.string().nullable(),
  usage: UsageSection,
  extraction: Extraction,
  warnings: z.array(z.string()),
  inputs: InputFingerprint,
});
export type Journal = z.infer<typeof Journal>;

export const TOP_FILES = 10;
export const RECENT_NOTES = 10;
