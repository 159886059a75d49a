import { z } from 'zod';

export const SessionStatus = z.enum(['active', 'done', 'failed']);
export type SessionStatus = z.infer<typeof SessionStatus>;

/** A session owns one workspace while an agent works on one todo. */
export const Session = z.object({
  id: z.string().min(1),
  repo: z.string(),
  todo_id: z.string(),
  workspace_path: z.string(),
  topic: z.string().default(''),
  status: SessionStatus,
  created_at: z.string(),
  updated_at: z.string(),
});
export type Session = z.infer<typeof Session>;

export const WorkspaceStatus = z.enum(['free', 'acquired']);
export type WorkspaceStatus = z.infer<typeof WorkspaceStatus>;

/** A git worktree under the state dir, reused across sessions once released. */
export const Workspace = z.object({
  path: z.string(),
  repo: z.string(),
  branch: z.string(),
  base_rev: z.string().nullable().default(null),
  status: WorkspaceStatus,
  session_id: z.string().nullable().default(null),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Workspace = z.infer<typeof Workspace>;

/**
 * A process group a job's runner started (an agent, a test command), recorded
 * until it has ended, so a dead runner's processes can be found and ended.
 */
export const ProcessGroup = z.object({
  id: z.number().int(),
  job_id: z.string(),
  workspace_path: z.string(),
  /** The group id, which is the pid of its leader. */
  pgid: z.number().int(),
  /** The leader's start time in clock ticks since boot (/proc/<pid>/stat); null where unknown. */
  start_ticks: z.number().int().nullable(),
  host: z.string(),
  label: z.string(),
  started_at: z.string(),
});
export type ProcessGroup = z.infer<typeof ProcessGroup>;
