// Forward-only schema migrations. The schema version is SQLite's user_version;
// migration i (1-based) takes a database from version i-1 to i. Never edit a
// migration that has shipped: add a new one.
export const MIGRATIONS: readonly string[] = [
  // 1: todos, sessions, workspaces, jobs and their change history.
  `
  CREATE TABLE todos (
    id TEXT PRIMARY KEY, repo TEXT NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL DEFAULT 'task', priority INTEGER NOT NULL DEFAULT 2, deps TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL DEFAULT 'open', created_at TEXT NOT NULL, updated_at TEXT NOT NULL
  );
  CREATE INDEX todos_repo ON todos(repo, status);
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY, repo TEXT NOT NULL, todo_id TEXT NOT NULL, workspace_path TEXT NOT NULL,
    topic TEXT NOT NULL DEFAULT '', status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
  );
  CREATE INDEX sessions_repo ON sessions(repo);
  CREATE TABLE workspaces (
    path TEXT PRIMARY KEY, repo TEXT NOT NULL, n INTEGER NOT NULL, branch TEXT NOT NULL, base_rev TEXT,
    status TEXT NOT NULL, session_id TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    UNIQUE (repo, n)
  );
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY, repo TEXT NOT NULL, todo_id TEXT NOT NULL, session_id TEXT,
    stage TEXT NOT NULL, status TEXT NOT NULL, feedback TEXT, project_review TEXT,
    pid INTEGER, host TEXT, base_rev TEXT, workspace_path TEXT, auto_commit INTEGER NOT NULL DEFAULT 1,
    input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL, updated_at TEXT NOT NULL, completed_at TEXT, failure_reason TEXT
  );
  CREATE INDEX jobs_repo ON jobs(repo, status);
  CREATE TABLE agent_sessions (
    job_id TEXT NOT NULL, seq INTEGER NOT NULL, purpose TEXT NOT NULL, id TEXT NOT NULL,
    transcript TEXT NOT NULL, started_at TEXT, usage TEXT, PRIMARY KEY (job_id, seq)
  );
  CREATE TABLE changes (
    job_id TEXT NOT NULL, seq INTEGER NOT NULL, change_id TEXT NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (job_id, seq)
  );
  CREATE TABLE commits (
    job_id TEXT NOT NULL, change_seq INTEGER NOT NULL, seq INTEGER NOT NULL, commit_id TEXT NOT NULL,
    draft_message TEXT NOT NULL DEFAULT '', tests_passed INTEGER, test_results TEXT NOT NULL DEFAULT '[]',
    agent_session_id TEXT, created_at TEXT NOT NULL, files TEXT NOT NULL DEFAULT '[]', usage TEXT,
    feedback TEXT, before TEXT, after TEXT,
    PRIMARY KEY (job_id, change_seq, seq)
  );
  CREATE TABLE reviews (
    job_id TEXT NOT NULL, change_seq INTEGER NOT NULL, commit_seq INTEGER NOT NULL, outcome TEXT NOT NULL,
    comments TEXT NOT NULL DEFAULT '', agent_session_id TEXT, reviewed_at TEXT NOT NULL,
    PRIMARY KEY (job_id, change_seq, commit_seq)
  );
  `,
  // 2: runner liveness, retries and the control requests the dashboard leaves for runners.
  `
  ALTER TABLE jobs ADD COLUMN heartbeat_at TEXT;
  ALTER TABLE jobs ADD COLUMN retried_from TEXT;
  CREATE TABLE control_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, kind TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, handled_at TEXT
  );
  CREATE INDEX control_pending ON control_requests(job_id, handled_at);
  CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
  INSERT INTO meta (key, value) VALUES ('version', 0);
  `,
  // 3: each job's and each commit's JSON text, kept by the writers, and an index
  // in listing order, so that listing thousands of jobs joins stored texts (job-json.ts).
  `
  ALTER TABLE jobs ADD COLUMN list_json TEXT;
  ALTER TABLE commits ADD COLUMN list_json TEXT;
  CREATE INDEX jobs_listing ON jobs(repo, started_at DESC, id);
  `,
  // 4: the dashboard reloads only the jobs stamped since the newest stamp it
  // saw (JobStore.listChangedSince); without these it scans every job's row on
  // each write another process makes.
  `
  CREATE INDEX jobs_updated ON jobs(updated_at);
  CREATE INDEX jobs_heartbeat ON jobs(heartbeat_at);
  `,
  // 5: each job carries the store version of the transaction that last wrote
  // it, so the dashboard reloads the jobs written after the version it saw:
  // a counter, where wall-clock stamps missed writes made after a clock step back.
  `
  ALTER TABLE jobs ADD COLUMN changed_version INTEGER;
  CREATE INDEX jobs_changed ON jobs(changed_version);
  DROP INDEX jobs_updated;
  DROP INDEX jobs_heartbeat;
  `,
  // 6: the process groups a runner starts (agents, test commands), so whoever
  // cleans up after a runner that died (kill -9) can end them before the
  // workspace is handed out again. start_ticks is the leader's start time
  // (/proc/<pid>/stat), which guards against killing a reused pid.
  `
  CREATE TABLE process_groups (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, workspace_path TEXT NOT NULL,
    pgid INTEGER NOT NULL, start_ticks INTEGER, host TEXT NOT NULL, label TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL
  );
  CREATE INDEX process_groups_job ON process_groups(job_id);
  CREATE INDEX process_groups_workspace ON process_groups(workspace_path);
  `,
  // 7: a commit keeps the id of the iteration it was made from once the
  // commit stage rewrites it with its final message (commit_id becomes the
  // final id), and a job's cost becomes whole micro-dollars: summing a REAL
  // column turned 0.0117 + 0.0117 into 0.023399999999999997. The listing
  // texts change shape (job-json.ts), so they are rebuilt.
  `
  ALTER TABLE commits ADD COLUMN iteration_commit_id TEXT;
  ALTER TABLE jobs ADD COLUMN cost_micros INTEGER NOT NULL DEFAULT 0;
  UPDATE jobs SET cost_micros = MIN(CAST(ROUND(MAX(cost, 0) * 1000000) AS INTEGER), 9007199254740991);
  UPDATE commits SET list_json = NULL;
  UPDATE jobs SET list_json = NULL;
  `,
  // 8: the backlog. A todo remembers when it was last reopened by hand, so
  // only the jobs since then count against [run] max-attempts; the backlog
  // asks for a repo's jobs by todo (readiness, claims).
  `
  ALTER TABLE todos ADD COLUMN reopened_at TEXT;
  CREATE INDEX jobs_todo ON jobs(repo, todo_id);
  `,
  // 9: landing. A job remembers the branch its base came from (where it
  // lands by default) and, once landed, where and on which commit
  // (JSON of model/job.ts JobLanded). The listing texts gain both keys.
  `
  ALTER TABLE jobs ADD COLUMN base_branch TEXT;
  ALTER TABLE jobs ADD COLUMN landed TEXT;
  UPDATE jobs SET list_json = NULL;
  `,
  // 10: a landing stopped in a conflict for a person ([land] on-conflict =
  // "stop"): JSON of model/job.ts JobLandConflict until it is continued or
  // aborted. The listing texts gain the key.
  `
  ALTER TABLE jobs ADD COLUMN land_conflict TEXT;
  UPDATE jobs SET list_json = NULL;
  `,
  // 11: a landing's progress or refusal (JSON of model/job.ts JobLanding),
  // written by the landing process for the board to show. The listing texts
  // gain the key.
  `
  ALTER TABLE jobs ADD COLUMN landing TEXT;
  UPDATE jobs SET list_json = NULL;
  `,
  // 12: backlog runners (ii run), so the board shows the one of its
  // repository and changes its slots while it runs (model/backlog-runner.ts).
  `
  CREATE TABLE runners (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    slots INTEGER NOT NULL,
    watch INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL
  );
  CREATE INDEX runners_repo ON runners(repo);
  `,
  // 13: the todos a backlog runner has started a job runner for that has not
  // claimed yet (a JSON array of todo ids), so two ii run on one backlog do
  // not both start one for the same todo, and count each other's starts
  // against their slots.
  `
  ALTER TABLE runners ADD COLUMN starting TEXT NOT NULL DEFAULT '[]';
  `,
  // 14: the store version of each todo's last write (as jobs have since 5),
  // so the board reads only the todos written since it last looked.
  `
  ALTER TABLE todos ADD COLUMN changed_version INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX todos_changed ON todos(repo, changed_version);
  `,
  // 15: a job started by a landing runner (ii run --land) is to land, so a
  // later landing runner lands it when the one that started it was killed
  // (model/job.ts to_land). A landing runner looks for them on every look at
  // the store: the partial index holds only those, not every finished job.
  // The listing texts gain the key.
  `
  ALTER TABLE jobs ADD COLUMN to_land INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX jobs_to_land ON jobs(repo, started_at DESC, id) WHERE to_land = 1 AND landed IS NULL;
  UPDATE jobs SET list_json = NULL;
  `,
  // 16: which process a job's runner is: "<pid>:<start ticks>" as its
  // heartbeat last wrote it. A pid alone comes back as another process's
  // (pid_max is 32768 on many machines), and a job whose runner was killed
  // then looked alive for good; with the start time, a reused pid is told
  // apart. Kept out of the Job model: only the cleanup of a dead runner reads it.
  `
  ALTER TABLE jobs ADD COLUMN runner_start TEXT;
  `,
  // 17: the iteration-history spec's iteration entry. Each iteration gets its
  // own stable id (iteration_id: commit_id changes when the commit stage
  // rewrites it), given here to the ones already recorded; its diff summary
  // is stored when it ends (diff_summary, NULL for older ones: computed on
  // request). Each file of an iteration gains abs_path (the file-tracking
  // spec's FileChange.AbsPath): the job's workspace joined with the path
  // where it is known, else null. The listing texts change shape.
  `
  ALTER TABLE commits ADD COLUMN iteration_id TEXT;
  UPDATE commits SET iteration_id = lower(hex(randomblob(6)));
  CREATE UNIQUE INDEX commits_iteration_id ON commits(job_id, iteration_id);
  ALTER TABLE commits ADD COLUMN diff_summary TEXT;
  UPDATE commits SET files = (
    SELECT json_group_array(json_set(f.value, '$.abs_path',
      (SELECT CASE WHEN j.workspace_path IS NULL OR j.workspace_path = '' THEN NULL
                   ELSE rtrim(j.workspace_path, '/') || '/' || json_extract(f.value, '$.path') END
       FROM jobs j WHERE j.id = commits.job_id)))
    FROM json_each(commits.files) f
  ) WHERE json_valid(files) AND json_type(files) = 'array' AND json_array_length(files) > 0;
  UPDATE commits SET list_json = NULL;
  UPDATE jobs SET list_json = NULL;
  `,
  // 18: whether a backlog runner lands as it goes (ii run --land), so the
  // board decides readiness as that runner does: under a landing runner a
  // todo whose dep completed but has not landed waits (model/backlog.ts).
  `
  ALTER TABLE runners ADD COLUMN lands INTEGER NOT NULL DEFAULT 0;
  `,
  // 19: permission requests an agent made that went to a person ([agent]
  // permissions = "ask"), open (outcome NULL) until answered, timed out or
  // cancelled (model/permission-ask.ts), and each job's total time spent
  // waiting for a person. A job's listing text gains `asking` (its open
  // request) and `waited_ms`.
  `
  CREATE TABLE permission_asks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, tool_kind TEXT, title TEXT NOT NULL DEFAULT '',
    command TEXT, paths TEXT NOT NULL DEFAULT '[]', diff_preview TEXT, options TEXT NOT NULL DEFAULT '[]',
    asked_at TEXT NOT NULL, answered_at TEXT, outcome TEXT, note TEXT, waited_ms INTEGER
  );
  CREATE INDEX permission_asks_job ON permission_asks(job_id, outcome);
  ALTER TABLE jobs ADD COLUMN waited_ms INTEGER NOT NULL DEFAULT 0;
  UPDATE jobs SET list_json = NULL;
  `,
  // 20: each job's events and agent transcripts as lines (api.ts
  // JobLogStore), numbered per job in append order. A shared (PostgreSQL)
  // store holds them so another machine reads a job's log; on SQLite the
  // runner keeps writing only the files (they are on this machine already),
  // and the table is here so the two schemas stay one and a copy between the
  // drivers carries the lines.
  `
  CREATE TABLE job_logs (
    job_id TEXT NOT NULL, seq INTEGER NOT NULL, stream TEXT NOT NULL, line TEXT NOT NULL,
    PRIMARY KEY (job_id, seq)
  );
  CREATE INDEX job_logs_stream ON job_logs(job_id, stream, seq);
  `,
  // 21: whether a listing text needs redaction or escaping when shown,
  // answered as the text is written (sqlite/job-json.ts, text/json.ts
  // shownAsIs): the rules' fingerprint when it needs neither, else NULL. A
  // listing copies the texts found clean as stored and scans only the others
  // (`ii job list --json` scanned 5 MB on each call). The texts kept already
  // are judged here (a finished job's is never written again); NULL for a
  // row with no text yet: such rows are scanned as before.
  `
  ALTER TABLE jobs ADD COLUMN list_shown INTEGER;
  ALTER TABLE commits ADD COLUMN list_shown INTEGER;
  UPDATE commits SET list_shown = ii_js_shown(list_json) WHERE list_json IS NOT NULL;
  UPDATE jobs SET list_shown = ii_js_shown(list_json) WHERE list_json IS NOT NULL;
  `,
  // 22: the active jobs' runners, read from an index alone. Every command
  // that lists or changes jobs first asks which active job's runner is gone
  // (cli/reap.ts, activeRunners); through jobs_repo each active job was a
  // read of its row, one page or more apiece (a job's row holds its listing
  // text): 9-14 ms of `ii job list` at 666 active jobs, before its first
  // byte. Partial: only the active jobs, a few at a time, are in it.
  `
  CREATE INDEX jobs_active ON jobs(repo, status, id, todo_id, pid, host) WHERE status = 'active';
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
