// Jobs and their history (changes → commits → reviews), one transaction per mutation.
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { UserError } from '../../errors.js';
import type {
  AgentPurpose,
  AgentSessionRef,
  Job,
  JobChange,
  JobCommit,
  JobReview,
  JobStage,
  JobStatus,
  Usage,
} from '../../model/job.js';
import type { JobBrief } from '../../model/backlog.js';
import { matchPrefix } from '../../model/prefix.js';
import { fromMicros, MAX_MICROS, normalizeUsage, toMicros } from '../../model/usage.js';
import type { CommitUpdate, JobStore, NewJob } from '../api.js';
import { nowIso, shortId } from '../ids.js';
import { statements, transaction } from './db.js';
import { jobsJson, refreshCommitJson, refreshJobJson } from './job-json.js';
import { toTodo, type TodoRow } from './todos.js';

/** A claim the backlog refused (model/backlog.ts claimRefusal says why). */
export class ClaimRefused extends UserError {}

interface JobRow {
  id: string;
  repo: string;
  todo_id: string;
  session_id: string | null;
  stage: string;
  status: string;
  feedback: string | null;
  project_review: string | null;
  pid: number | null;
  host: string | null;
  heartbeat_at: string | null;
  base_rev: string | null;
  workspace_path: string | null;
  auto_commit: number;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
  started_at: string;
  updated_at: string;
  completed_at: string | null;
  failure_reason: string | null;
  retried_from: string | null;
}
interface CommitRow {
  job_id: string;
  change_seq: number;
  seq: number;
  commit_id: string;
  iteration_commit_id: string | null;
  draft_message: string;
  tests_passed: number | null;
  test_results: string;
  agent_session_id: string | null;
  created_at: string;
  files: string;
  usage: string | null;
  feedback: string | null;
  before: string | null;
  after: string | null;
}
interface ReviewRow {
  job_id: string;
  change_seq: number;
  commit_seq: number;
  outcome: string;
  comments: string;
  agent_session_id: string | null;
  reviewed_at: string;
}

const ZERO: Usage = { input_tokens: 0, output_tokens: 0, cost: 0 };
const json = <T>(s: string | null, fallback: T): T => (s == null ? fallback : (JSON.parse(s) as T));
const toReview = (r: ReviewRow): JobReview => ({
  outcome: r.outcome as JobReview['outcome'],
  comments: r.comments,
  agent_session_id: r.agent_session_id,
  reviewed_at: r.reviewed_at,
});

const toCommit = (c: CommitRow, review: JobReview | null): JobCommit => ({
  commit_id: c.commit_id,
  iteration_commit_id: c.iteration_commit_id,
  draft_message: c.draft_message,
  tests_passed: c.tests_passed == null ? null : c.tests_passed === 1,
  test_results: json(c.test_results, []),
  review,
  agent_session_id: c.agent_session_id,
  created_at: c.created_at,
  files: json(c.files, []),
  usage: json(c.usage, ZERO),
  feedback: c.feedback,
  before: json(c.before, null),
  after: json(c.after, null),
});

/**
 * The store version the current transaction commits (transaction() adds one
 * at its end), stamped on every job it writes: writers hold the write lock
 * from BEGIN IMMEDIATE, so versions follow commit order whatever the clocks say.
 */
const NEXT_VERSION = "(SELECT value + 1 FROM meta WHERE key = 'version')";

/** What the backlog needs of each job of a repo, without loading the jobs (model/backlog.ts). */
const BRIEFS = `SELECT j.id, j.todo_id, j.status, j.stage, j.started_at, j.completed_at, j.pid, j.host,
    j.heartbeat_at, j.updated_at, j.cost_micros,
    (SELECT COUNT(*) FROM commits c WHERE c.job_id = j.id
       AND c.change_seq = (SELECT MAX(seq) FROM changes WHERE job_id = j.id)) AS iteration
  FROM jobs j WHERE j.repo = ?`;
interface BriefRow {
  id: string;
  todo_id: string;
  status: string;
  stage: string;
  started_at: string;
  completed_at: string | null;
  pid: number | null;
  host: string | null;
  heartbeat_at: string | null;
  updated_at: string;
  cost_micros: number;
  iteration: number;
}
const toBrief = (r: BriefRow): JobBrief => ({
  id: r.id,
  todo_id: r.todo_id,
  status: r.status as JobStatus,
  stage: r.stage as JobStage,
  started_at: r.started_at,
  completed_at: r.completed_at,
  pid: r.pid,
  host: r.host,
  heartbeat_at: r.heartbeat_at,
  updated_at: r.updated_at,
  cost: fromMicros(r.cost_micros),
  iteration: r.iteration,
});

/** The columns a Job is made of: not list_json, the job's text for listings (job-json.ts). */
const JOB_COLUMNS = `id, repo, todo_id, session_id, stage, status, feedback, project_review, pid, host,
  base_rev, workspace_path, auto_commit, input_tokens, output_tokens, cost_micros, started_at, updated_at,
  completed_at, failure_reason, heartbeat_at, retried_from`;

/** The columns a JobCommit is made of: not list_json, the commit's text for listings. */
const COMMIT_COLUMNS = `job_id, change_seq, seq, commit_id, iteration_commit_id, draft_message, tests_passed, test_results,
  agent_session_id, created_at, files, usage, feedback, before, after`;

/** Jobs whose children are read in one go; larger loads go a chunk at a time. */
const LOAD_CHUNK = 500;

export function sqliteJobStore(db: DatabaseSync): JobStore {
  const q = statements(db);
  const jobRow = q('SELECT id FROM jobs WHERE id = ?');

  /**
   * Loads whole jobs for a WHERE clause on `jobs`, in five queries whatever
   * the count; past LOAD_CHUNK jobs, their children are read a chunk of jobs
   * at a time, which bounds the memory a load of thousands of jobs (the
   * dashboard's) takes at its peak.
   * job-json.ts writes the same jobs as JSON text: change the two together.
   */
  function load(where: string, params: SQLInputValue[]): Job[] {
    const rows = q(`SELECT ${JOB_COLUMNS} FROM jobs WHERE ${where} ORDER BY started_at DESC, id`).all(
      ...params,
    ) as unknown as JobRow[];
    if (rows.length === 0) return [];
    if (rows.length <= LOAD_CHUNK)
      return assemble(rows, `job_id IN (SELECT id FROM jobs WHERE ${where})`, params);
    const out: Job[] = [];
    // One statement for every chunk: the last one is padded with NULLs, which match nothing.
    const sub = `job_id IN (${Array.from({ length: LOAD_CHUNK }, () => '?').join(',')})`;
    for (let i = 0; i < rows.length; i += LOAD_CHUNK) {
      const chunk = rows.slice(i, i + LOAD_CHUNK);
      const ids: SQLInputValue[] = chunk.map((r) => r.id);
      while (ids.length < LOAD_CHUNK) ids.push(null);
      out.push(...assemble(chunk, sub, ids));
    }
    return out;
  }

  /** Whole jobs for `rows`, their children selected by `sub` (a condition on job_id) with `params`. */
  function assemble(rows: JobRow[], sub: string, params: SQLInputValue[]): Job[] {
    const changes = q(`SELECT * FROM changes WHERE ${sub} ORDER BY job_id, seq`).all(
      ...params,
    ) as unknown as {
      job_id: string;
      seq: number;
      change_id: string;
      created_at: string;
    }[];
    const commits = q(
      `SELECT ${COMMIT_COLUMNS} FROM commits WHERE ${sub} ORDER BY job_id, change_seq, seq`,
    ).all(...params) as unknown as CommitRow[];
    const reviews = q(`SELECT * FROM reviews WHERE ${sub}`).all(...params) as unknown as ReviewRow[];
    const agents = q(`SELECT * FROM agent_sessions WHERE ${sub} ORDER BY job_id, seq`).all(
      ...params,
    ) as unknown as {
      job_id: string;
      purpose: string;
      id: string;
      transcript: string;
      started_at: string | null;
      usage: string | null;
    }[];

    const reviewByKey = new Map<string, JobReview>();
    for (const r of reviews) reviewByKey.set(`${r.job_id}\0${r.change_seq}\0${r.commit_seq}`, toReview(r));
    const changesByJob = new Map<string, Map<number, JobChange>>();
    for (const c of changes) {
      let m = changesByJob.get(c.job_id);
      if (!m) changesByJob.set(c.job_id, (m = new Map()));
      m.set(c.seq, { change_id: c.change_id, created_at: c.created_at, commits: [] });
    }
    for (const c of commits) {
      const change = changesByJob.get(c.job_id)?.get(c.change_seq);
      if (!change) continue;
      change.commits.push(toCommit(c, reviewByKey.get(`${c.job_id}\0${c.change_seq}\0${c.seq}`) ?? null));
    }
    const agentsByJob = new Map<string, AgentSessionRef[]>();
    for (const a of agents) {
      const ref: AgentSessionRef = { purpose: a.purpose as AgentPurpose, id: a.id, transcript: a.transcript };
      if (a.started_at) ref.started_at = a.started_at;
      if (a.usage) ref.usage = JSON.parse(a.usage) as Usage;
      const list = agentsByJob.get(a.job_id);
      if (list) list.push(ref);
      else agentsByJob.set(a.job_id, [ref]);
    }
    return rows.map((r) => ({
      id: r.id,
      repo: r.repo,
      todo_id: r.todo_id,
      session_id: r.session_id,
      stage: r.stage as JobStage,
      status: r.status as JobStatus,
      feedback: r.feedback,
      agent_sessions: agentsByJob.get(r.id) ?? [],
      changes: [...(changesByJob.get(r.id)?.values() ?? [])],
      project_review: json(r.project_review, null),
      pid: r.pid,
      host: r.host,
      heartbeat_at: r.heartbeat_at,
      base_rev: r.base_rev,
      workspace_path: r.workspace_path,
      auto_commit: r.auto_commit === 1,
      usage: {
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        cost: fromMicros(r.cost_micros),
      },
      started_at: r.started_at,
      updated_at: r.updated_at,
      completed_at: r.completed_at,
      failure_reason: r.failure_reason,
      retried_from: r.retried_from,
    }));
  }

  function listWhere(
    repo: string,
    opts: { activeOnly?: boolean; status?: JobStatus },
  ): [string, SQLInputValue[]] {
    if (opts.status) return ['repo = ? AND status = ?', [repo, opts.status]];
    return opts.activeOnly ? ["repo = ? AND status = 'active'", [repo]] : ['repo = ?', [repo]];
  }

  /** The new job's row (inside the caller's transaction). */
  function insertJob(repo: string, input: NewJob): Job {
    let id = shortId(input.todo_id);
    while (jobRow.get(id)) id = shortId(input.todo_id);
    const now = nowIso();
    q(
      `INSERT INTO jobs (id, repo, todo_id, session_id, stage, status, base_rev, workspace_path, auto_commit,
         pid, host, heartbeat_at, started_at, updated_at, retried_from, changed_version)
       VALUES (?,?,?,?,'implementing','active',?,?,?,?,?,?,?,?,?, ${NEXT_VERSION})`,
    ).run(
      id,
      repo,
      input.todo_id,
      input.session_id ?? null,
      input.base_rev ?? null,
      input.workspace_path ?? null,
      input.auto_commit === false ? 0 : 1,
      input.pid ?? null,
      input.host ?? null,
      input.pid != null ? now : null,
      now,
      now,
      input.retried_from ?? null,
    );
    refreshJobJson(db, id);
    return mustGet(id);
  }

  function mustGet(id: string): Job {
    const job = load('id = ?', [id])[0];
    if (!job) throw new UserError(`no job ${id}`);
    return job;
  }

  function touch(id: string, set = '', params: SQLInputValue[] = []): void {
    const res = q(
      `UPDATE jobs SET ${set}${set ? ', ' : ''}updated_at = ?, changed_version = ${NEXT_VERSION} WHERE id = ?`,
    ).run(...params, nowIso(), id);
    if (res.changes === 0) throw new UserError(`no job ${id}`);
    // touch is every mutation's last write: the job's listing text follows it.
    refreshJobJson(db, id);
  }

  function currentSeqs(id: string): { change: number; commit: number } {
    const ch = q('SELECT MAX(seq) AS s FROM changes WHERE job_id = ?').get(id) as {
      s: number | null;
    };
    if (ch.s == null) throw new Error(`job ${id} has no change to add a commit to`);
    const cm = q('SELECT MAX(seq) AS s FROM commits WHERE job_id = ? AND change_seq = ?').get(id, ch.s) as {
      s: number | null;
    };
    return { change: ch.s, commit: cm.s ?? 0 };
  }

  /** One commit and its review, without loading the rest of the job. */
  function readCommit(id: string, change: number, seq: number): JobCommit {
    const c = q(`SELECT ${COMMIT_COLUMNS} FROM commits WHERE job_id = ? AND change_seq = ? AND seq = ?`).get(
      id,
      change,
      seq,
    ) as CommitRow | undefined;
    if (!c) throw new Error(`job ${id}: commit ${change}/${seq} vanished`);
    const r = q('SELECT * FROM reviews WHERE job_id = ? AND change_seq = ? AND commit_seq = ?').get(
      id,
      change,
      seq,
    ) as ReviewRow | undefined;
    return toCommit(c, r ? toReview(r) : null);
  }

  const store: JobStore = {
    create(repo, input: NewJob) {
      return transaction(db, () => insertJob(repo, input));
    },
    briefs(repo) {
      return (q(BRIEFS).all(repo) as unknown as BriefRow[]).map(toBrief);
    },
    claim(repo, input, check) {
      return transaction(db, () => {
        const todos = (q('SELECT * FROM todos WHERE repo = ?').all(repo) as unknown as TodoRow[]).map(toTodo);
        const jobs = (q(BRIEFS).all(repo) as unknown as BriefRow[]).map(toBrief);
        const refusal = check(todos, jobs);
        if (refusal !== null) throw new ClaimRefused(refusal);
        const job = insertJob(repo, input);
        q("UPDATE todos SET status = 'in_progress', updated_at = ? WHERE repo = ? AND id = ?").run(
          nowIso(),
          repo,
          input.todo_id,
        );
        return job;
      });
    },
    get: (id) => load('id = ?', [id])[0] ?? null,
    resolve(repo, prefix) {
      const ids = q('SELECT id FROM jobs WHERE repo = ?').all(repo) as { id: string }[];
      const m = matchPrefix(ids, prefix, (j) => j.id);
      if (m.kind === 'one') return mustGet(m.item.id);
      if (m.kind === 'none')
        throw new UserError(
          `no job matches "${prefix}" in this repository. List them with: ii job list --all`,
        );
      throw new UserError(
        `"${prefix}" matches ${m.items.length} jobs; type more of the id:\n` +
          m.items.map((j) => `  ${j.id}`).join('\n'),
      );
    },
    list: (repo, opts = {}) => load(...listWhere(repo, opts)),
    listJson: (repo, opts = {}) => jobsJson(db, ...listWhere(repo, opts)),
    // `+repo` keeps SQLite off the repo index: jobs_changed finds the few changed jobs.
    listChangedAfter: (after, repo = null) =>
      repo ? load('+repo = ? AND changed_version > ?', [repo, after]) : load('changed_version > ?', [after]),
    listAll: (opts = {}) => (opts.activeOnly ? load("status = 'active'", []) : load('1 = 1', [])),
    setStage: (id, stage) =>
      transaction(db, () => {
        touch(id, 'stage = ?', [stage]);
        return mustGet(id);
      }),
    setFeedback: (id, feedback) =>
      transaction(db, () => {
        touch(id, 'feedback = ?', [feedback]);
        return mustGet(id);
      }),
    setSession: (id, session_id, workspace_path, base_rev) =>
      transaction(db, () => {
        if (base_rev !== undefined)
          touch(id, 'session_id = ?, workspace_path = ?, base_rev = ?', [
            session_id,
            workspace_path,
            base_rev,
          ]);
        else touch(id, 'session_id = ?, workspace_path = ?', [session_id, workspace_path]);
        return mustGet(id);
      }),
    addAgentSession: (id, ref) =>
      transaction(db, () => {
        const s = q('SELECT COALESCE(MAX(seq), 0) + 1 AS s FROM agent_sessions WHERE job_id = ?').get(id) as {
          s: number;
        };
        q(
          'INSERT INTO agent_sessions (job_id, seq, purpose, id, transcript, started_at, usage) VALUES (?,?,?,?,?,?,?)',
        ).run(
          id,
          s.s,
          ref.purpose,
          ref.id,
          ref.transcript,
          ref.started_at ?? nowIso(),
          ref.usage ? JSON.stringify(normalizeUsage(ref.usage)) : null,
        );
        touch(id);
        return mustGet(id);
      }),
    recordAgentUsage: (id, agentSessionId, usage) =>
      transaction(db, () => {
        const n = normalizeUsage(usage);
        q('UPDATE agent_sessions SET usage = ? WHERE job_id = ? AND id = ?').run(
          JSON.stringify(n),
          id,
          agentSessionId,
        );
        addToTotal(id, n);
        return mustGet(id);
      }),
    appendChange: (id, change_id) =>
      transaction(db, () => {
        const s = q('SELECT COALESCE(MAX(seq), 0) + 1 AS s FROM changes WHERE job_id = ?').get(id) as {
          s: number;
        };
        const now = nowIso();
        q('INSERT INTO changes (job_id, seq, change_id, created_at) VALUES (?,?,?,?)').run(
          id,
          s.s,
          change_id,
          now,
        );
        touch(id);
        return { change_id, created_at: now, commits: [] };
      }),
    appendCommit: (id, c) =>
      transaction(db, () => {
        const { change, commit } = currentSeqs(id);
        q(
          `INSERT INTO commits (job_id, change_seq, seq, commit_id, iteration_commit_id, draft_message, tests_passed,
             test_results, agent_session_id, created_at, files, usage, feedback, before, after)
           VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
        ).run(
          id,
          change,
          commit + 1,
          c.commit_id,
          c.iteration_commit_id ?? null,
          c.draft_message ?? '',
          c.tests_passed == null ? null : c.tests_passed ? 1 : 0,
          JSON.stringify(c.test_results ?? []),
          c.agent_session_id ?? null,
          c.created_at ?? nowIso(),
          JSON.stringify(c.files ?? []),
          JSON.stringify(normalizeUsage(c.usage ?? ZERO)),
          c.feedback ?? null,
          c.before ? JSON.stringify(c.before) : null,
          c.after ? JSON.stringify(c.after) : null,
        );
        if (c.review) writeReview(id, change, commit + 1, c.review);
        refreshCommitJson(db, id, change, commit + 1);
        touch(id);
        return readCommit(id, change, commit + 1);
      }),
    updateCurrentCommit: (id, u: CommitUpdate) =>
      transaction(db, () => {
        const { change, commit } = currentSeqs(id);
        if (commit === 0) throw new Error(`job ${id}: the current change has no commit to update`);
        const sets: string[] = [];
        const params: SQLInputValue[] = [];
        const set = (col: string, v: SQLInputValue) => {
          sets.push(`${col} = ?`);
          params.push(v);
        };
        if (u.commit_id !== undefined) set('commit_id', u.commit_id);
        if (u.iteration_commit_id !== undefined) set('iteration_commit_id', u.iteration_commit_id);
        if (u.draft_message !== undefined) set('draft_message', u.draft_message);
        if (u.tests_passed !== undefined)
          set('tests_passed', u.tests_passed == null ? null : u.tests_passed ? 1 : 0);
        if (u.test_results !== undefined) set('test_results', JSON.stringify(u.test_results));
        if (u.files !== undefined) set('files', JSON.stringify(u.files));
        if (u.usage !== undefined) set('usage', JSON.stringify(normalizeUsage(u.usage)));
        if (u.after !== undefined) set('after', u.after ? JSON.stringify(u.after) : null);
        if (sets.length > 0)
          q(`UPDATE commits SET ${sets.join(', ')} WHERE job_id = ? AND change_seq = ? AND seq = ?`).run(
            ...params,
            id,
            change,
            commit,
          );
        if (u.review !== undefined) {
          if (u.review) writeReview(id, change, commit, u.review);
          else
            q('DELETE FROM reviews WHERE job_id = ? AND change_seq = ? AND commit_seq = ?').run(
              id,
              change,
              commit,
            );
        }
        refreshCommitJson(db, id, change, commit);
        touch(id);
        return readCommit(id, change, commit);
      }),
    setProjectReview: (id, review) =>
      transaction(db, () => {
        touch(id, 'project_review = ?', [JSON.stringify(review)]);
        return mustGet(id);
      }),
    addUsage: (id, u) =>
      transaction(db, () => {
        addToTotal(id, normalizeUsage(u));
        return mustGet(id);
      }),
    finish: (id, status, reason = null) =>
      transaction(db, () => {
        const now = nowIso();
        touch(id, 'status = ?, completed_at = ?, failure_reason = ?', [status, now, reason]);
        return mustGet(id);
      }),
    heartbeat(id, pid, host) {
      transaction(db, () => {
        const now = nowIso();
        q(
          `UPDATE jobs SET pid = ?, host = ?, heartbeat_at = ?, changed_version = ${NEXT_VERSION} WHERE id = ?`,
        ).run(pid, host, now, id);
        refreshJobJson(db, id);
      });
    },
    version: () => (q("SELECT value FROM meta WHERE key = 'version'").get() as { value: number }).value,
  };

  /** Adds to the job's total: whole micro-dollars, capped where a double stops being exact (usage.ts). */
  function addToTotal(id: string, n: Usage): void {
    touch(
      id,
      'input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, cost_micros = MIN(cost_micros + ?, ?)',
      [n.input_tokens, n.output_tokens, toMicros(n.cost), MAX_MICROS],
    );
  }

  function writeReview(id: string, change: number, commit: number, r: JobReview): void {
    q(
      `INSERT INTO reviews (job_id, change_seq, commit_seq, outcome, comments, agent_session_id, reviewed_at) VALUES (?,?,?,?,?,?,?)
       ON CONFLICT (job_id, change_seq, commit_seq) DO UPDATE SET outcome = excluded.outcome, comments = excluded.comments,
         agent_session_id = excluded.agent_session_id, reviewed_at = excluded.reviewed_at`,
    ).run(id, change, commit, r.outcome, r.comments, r.agent_session_id, r.reviewed_at);
  }

  return store;
}
