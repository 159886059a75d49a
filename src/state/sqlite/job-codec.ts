// Where each field of a Job and of its parts is stored: one table per model
// object (codec.ts says how a table reads). The loader (jobs.ts) makes Jobs
// with read(), the listing texts (job-json.ts) are written by SQLite with
// json(), and both follow these tables, so a field is added here once.
//
// A stored listing text is only right for the build that wrote it: a change to
// what a job's or a commit's text holds must come with a migration that clears
// list_json in both tables (UPDATE ... SET list_json = NULL). Its verdict
// (list_shown) counts only beside a kept text, so it needs no clearing.
import type { JobBrief } from '../../model/backlog.js';
import type {
  AgentSessionRef,
  IterationSnapshot,
  Job,
  JobChange,
  JobCommit,
  JobLanded,
  JobLandConflict,
  JobLanding,
  JobReview,
  Usage,
} from '../../model/job.js';
import type { PermissionAsk } from '../../model/permission-ask.js';
import { ZERO_USAGE } from '../../model/usage.js';
import { ASK } from './ask-codec.js';
import { dollars, flag, given, jsonArray, nested, optional, plain, stored, table, text } from './codec.js';

export const REVIEW = table<JobReview>({
  outcome: plain(),
  comments: plain(),
  agent_session_id: plain(),
  reviewed_at: plain(),
});

const noSnapshot = (): IterationSnapshot | null => null;

/** Its review comes from the reviews table (key `review` of read()'s extra). */
export const COMMIT = table<JobCommit, { review: JobReview | null }>({
  // The iteration's id lives in iteration_id: commits.id would read as the commit's.
  id: text('iteration_id'),
  commit_id: plain(),
  iteration_commit_id: plain(),
  draft_message: plain(undefined, ''),
  tests_passed: flag(),
  test_results: stored(() => []),
  review: given(
    (c) =>
      `COALESCE((SELECT ${REVIEW.json('r')} FROM reviews r WHERE r.job_id = ${c}.job_id AND r.change_seq = ${c}.change_seq AND r.commit_seq = ${c}.seq), 'null')`,
  ),
  agent_session_id: plain(),
  created_at: plain(),
  files: stored(() => []),
  usage: stored(() => ({ ...ZERO_USAGE })),
  feedback: plain(),
  before: stored(noSnapshot),
  after: stored(noSnapshot),
  diff_summary: plain(),
});

/** The JSON array of the commits of the change aliased `ch`, each from its kept text when it has one. */
export const commitsJson = (ch: string): string =>
  jsonArray(
    `COALESCE(c.list_json, ${COMMIT.json('c')})`,
    'commits',
    'c',
    `job_id = ${ch}.job_id AND change_seq = ${ch}.seq`,
    'seq',
  );

/** Its commits come from the commits table (commitsJson). */
export const CHANGE = table<JobChange, { commits: JobCommit[] }>({
  change_id: plain(),
  created_at: plain(),
  commits: given(commitsJson),
});

export const AGENT_SESSION = table<AgentSessionRef>({
  purpose: plain(),
  id: plain(),
  transcript: plain(),
  started_at: optional(plain()),
  usage: optional(stored((): Usage => ({ ...ZERO_USAGE }))),
});

/** Its agent sessions and changes come from their tables. */
export const JOB = table<
  Job,
  { agent_sessions: AgentSessionRef[]; changes: JobChange[]; asking: PermissionAsk | null }
>({
  id: plain(),
  repo: plain(),
  todo_id: plain(),
  session_id: plain(),
  stage: plain(),
  status: plain(),
  feedback: plain(),
  agent_sessions: given((j) =>
    jsonArray(AGENT_SESSION.json('a'), 'agent_sessions', 'a', `job_id = ${j}.id`, 'seq'),
  ),
  changes: given((j) => jsonArray(CHANGE.json('ch'), 'changes', 'ch', `job_id = ${j}.id`, 'seq')),
  project_review: stored((): JobReview | null => null),
  pid: plain(),
  host: plain(),
  heartbeat_at: plain(),
  base_rev: plain(),
  workspace_path: plain(),
  auto_commit: flag(),
  usage: nested<Usage>({
    input_tokens: plain(),
    output_tokens: plain(),
    cost: dollars('cost_micros'),
  }),
  started_at: plain(),
  updated_at: plain(),
  completed_at: plain(),
  failure_reason: plain(),
  retried_from: plain(),
  base_branch: plain(),
  landed: stored((): JobLanded | null => null),
  land_conflict: stored((): JobLandConflict | null => null),
  landing: stored((): JobLanding | null => null),
  to_land: flag(),
  // The newest request still open (the runner keeps at most one open per job).
  asking: given(
    (j) =>
      `COALESCE((SELECT ${ASK.json('p')} FROM permission_asks p WHERE p.job_id = ${j}.id AND p.outcome IS NULL ORDER BY p.id DESC LIMIT 1), 'null')`,
  ),
  waited_ms: plain<number>(undefined, 0),
});

/** A job's brief for the backlog: its iteration is counted by the query that reads it (jobs.ts). */
export const BRIEF = table<JobBrief>({
  id: plain(),
  todo_id: plain(),
  status: plain(),
  stage: plain(),
  started_at: plain(),
  completed_at: plain(),
  pid: plain(),
  host: plain(),
  heartbeat_at: plain(),
  updated_at: plain(),
  cost: dollars('cost_micros'),
  iteration: plain(),
  unlanded: flag(),
  committed: flag(),
});
