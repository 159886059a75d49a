// The model's enumerations as plain constants. The zod schemas are built from
// these, and command definitions (help text, --type choices) read them here so
// that printing help or listing jobs never has to load zod.

/** Kinds of work a todo can describe. */
export const TODO_TYPES = ['task', 'bug', 'feature', 'chore'] as const;
/** open → in_progress (a session took it) → done | open again (failed) ; closed by hand. */
export const TODO_STATUSES = ['open', 'in_progress', 'done', 'closed'] as const;
/** Where an active job is in its loop (README, "Running a job"; src/job/runner.ts). */
export const JOB_STAGES = ['implementing', 'testing', 'reviewing', 'committing'] as const;
export const JOB_STATUSES = ['active', 'completed', 'failed', 'abandoned'] as const;

/** What a person can answer an agent's permission request (ii job answer, the board's y / A / n). */
export const ASK_ANSWERS = ['allow', 'allow-always', 'reject'] as const;
/**
 * How a request ended: a person's answer, `timeout` ([agent] ask-timeout
 * passed: rejected) or `cancelled` (the job was abandoned or its turn ended
 * while it waited).
 */
export const ASK_OUTCOMES = [...ASK_ANSWERS, 'timeout', 'cancelled'] as const;
