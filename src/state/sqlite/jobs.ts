// Jobs and their history (changes → commits → reviews), one transaction per mutation.
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { ClaimRefused, UserError } from '../../errors.js';
import type {
  AgentSessionRef,
  Job,
  JobChange,
  JobCommit,
  JobLanding,
  JobReview,
  JobStatus,
  Usage,
} from '../../model/job.js';
import type { JobBrief } from '../../model/backlog.js';
import type { JobCard } from '../../model/job-card.js';
import type { PermissionAsk } from '../../model/permission-ask.js';
import { matchPrefix } from '../../model/prefix.js';
import { MAX_MICROS, normalizeUsage, toMicros, ZERO_USAGE } from '../../model/usage.js';
import type { CommitUpdate, JobStore, NewJob } from '../api.js';
import { iterationId, nowIso, shortId } from '../ids.js';
import type { Row } from './codec.js';
import { NEXT_VERSION, statements, transaction } from './db.js';
import { ASK } from './ask-codec.js';
import { cancelOpenAsks } from './asks.js';
import { AGENT_SESSION, BRIEF, CHANGE, COMMIT, JOB, REVIEW } from './job-codec.js';
import { commitTextLater, eachJobShown, jobsJson, jobsShown, jobTextLater } from './job-json.js';
import { toTodo, type TodoRow } from './todos.js';

/** The keys a loader joins a commit's or a review's row to its job and change by. */
interface CommitKeys {
  job_id: string;
  change_seq: number;
  seq: number;
}
type CommitRow = Row & CommitKeys;
type ReviewRow = Row & { job_id: string; change_seq: number; commit_seq: number };

/** What the backlog needs of each job of a repo, without loading the jobs (model/backlog.ts). */
const BRIEF_ROWS = `SELECT ${BRIEF.cols.filter((c) => c !== 'iteration' && c !== 'unlanded' && c !== 'committed').join(', ')},
    (SELECT COUNT(*) FROM commits c WHERE c.job_id = j.id
       AND c.change_seq = (SELECT MAX(seq) FROM changes WHERE job_id = j.id)) AS iteration,
    (j.status = 'completed' AND j.landed IS NULL
       AND EXISTS (SELECT 1 FROM commits c WHERE c.job_id = j.id)) AS unlanded,
    EXISTS (SELECT 1 FROM commits c WHERE c.job_id = j.id) AS committed
  FROM jobs j`;
const BRIEFS = `${BRIEF_ROWS} WHERE j.repo = ?`;
// `+repo` keeps SQLite off the repo index: jobs_changed finds the few changed jobs.
const BRIEFS_CHANGED = `${BRIEF_ROWS} WHERE +j.repo = ? AND j.changed_version > ?`;
const briefs = (rows: Row[]): JobBrief[] => rows.map((r) => BRIEF.read(r, undefined));

/** The columns a Job is made of: not list_json, the job's text for listings (job-json.ts). */
const JOB_COLUMNS = JOB.cols.join(', ');

/** The columns a JobCommit is made of, with the keys that place it. */
const COMMIT_COLUMNS = ['job_id', 'change_seq', 'seq', ...COMMIT.cols].join(', ');

/** A commit's row: the keys that place it, then every column the model's fields are stored in. */
const INSERT_COMMIT = `INSERT INTO commits (job_id, change_seq, seq, ${COMMIT.writes.map((w) => w.col).join(', ')})
  VALUES (?, ?, ?, ${COMMIT.writes.map(() => '?').join(', ')})`;

/** Shared by every card without them (a card is never changed in place). */
const NO_SESSIONS: AgentSessionRef[] = [];
const NO_CHANGES: JobChange[] = [];
const NO_ITERATIONS: readonly number[] = [];
const NO_USAGE: Usage = { ...ZERO_USAGE };

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
   * Rows become model objects through the tables in job-codec.ts, which
   * job-json.ts writes the same jobs' JSON text from.
   */
  function load(where: string, params: SQLInputValue[]): Job[] {
    const order = 'ORDER BY started_at DESC, id';
    const rows = q(`SELECT ${JOB_COLUMNS} FROM jobs WHERE ${where} ${order} LIMIT ${LOAD_CHUNK + 1}`).all(
      ...params,
    );
    if (rows.length === 0) return [];
    if (rows.length <= LOAD_CHUNK)
      return assemble(rows, `job_id IN (SELECT id FROM jobs WHERE ${where})`, params);
    const out: Job[] = [];
    // One statement for every chunk: the last one is padded with NULLs, which match nothing.
    const marks = Array.from({ length: LOAD_CHUNK }, () => '?').join(',');
    const sub = `job_id IN (${marks})`;
    const chunkRows = q(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id IN (${marks}) ${order}`);
    // Each chunk's rows are read with it and let go after: holding every
    // job's row at once while the jobs were made left the dashboard's heap
    // (10,000 jobs) some 10 MB larger than what it then holds.
    const all = q(`SELECT id FROM jobs WHERE ${where} ${order}`)
      .all(...params)
      .map((r) => r.id as SQLInputValue);
    for (let i = 0; i < all.length; i += LOAD_CHUNK) {
      const ids = all.slice(i, i + LOAD_CHUNK);
      while (ids.length < LOAD_CHUNK) ids.push(null);
      out.push(...assemble(chunkRows.all(...ids), sub, ids));
    }
    return out;
  }

  /**
   * The jobs of a WHERE clause on `jobs`, newest first, as the board lists
   * them (model/job-card.ts): each job's row, its agent sessions, its open
   * request and a commit count per change, without its commits' rows. Rows
   * are read one at a time and let go.
   */
  function cards(where: string, params: SQLInputValue[]): JobCard[] {
    const sub = `job_id IN (SELECT id FROM jobs WHERE ${where})`;
    const iterations = new Map<string, number[]>();
    const counts = q(
      `SELECT ch.job_id AS job_id,
         (SELECT COUNT(*) FROM commits c WHERE c.job_id = ch.job_id AND c.change_seq = ch.seq) AS n
       FROM changes ch WHERE ch.${sub} ORDER BY ch.job_id, ch.seq`,
    );
    for (const r of counts.iterate(...params)) {
      const list = iterations.get(r.job_id as string);
      if (list) list.push(r.n as number);
      else iterations.set(r.job_id as string, [r.n as number]);
    }
    // Most jobs' counts are alike ([1], [0], [2, 1]…): one array each (cards are never changed in place).
    const alike = new Map<string, number[]>();
    for (const [job, list] of iterations) {
      const key = list.join(',');
      const had = alike.get(key);
      if (had) iterations.set(job, had);
      else alike.set(key, list);
    }
    const agents = new Map<string, AgentSessionRef[]>();
    for (const a of q(`SELECT * FROM agent_sessions WHERE ${sub} ORDER BY job_id, seq`).iterate(...params)) {
      const list = agents.get(a.job_id as string);
      const ref = AGENT_SESSION.read(a, undefined);
      if (list) list.push(ref);
      else agents.set(a.job_id as string, [ref]);
    }
    // Open requests only, oldest first: a later one (the newest) wins.
    const asks = new Map<string, PermissionAsk>();
    for (const a of q(
      `SELECT * FROM permission_asks WHERE ${sub} AND outcome IS NULL ORDER BY job_id, id`,
    ).iterate(...params))
      asks.set(a.job_id as string, ASK.read(a, undefined));
    // SQLite gives each row its own copy of a text: the few values that
    // repeat across thousands of jobs are kept once.
    const seen = new Map<string, string>();
    const once = <T extends string | null>(v: T): T => {
      if (v === null) return v;
      const had = seen.get(v);
      if (had !== undefined) return had as T;
      seen.set(v, v);
      return v;
    };
    const out: JobCard[] = [];
    const rows = q(`SELECT ${JOB_COLUMNS} FROM jobs WHERE ${where} ORDER BY started_at DESC, id`);
    for (const r of rows.iterate(...params)) {
      const id = r.id as string;
      // One object per card, in one shape: JOB.read's record is let go at once.
      const j = JOB.read(r, {
        agent_sessions: agents.get(id) ?? NO_SESSIONS,
        changes: NO_CHANGES,
        asking: asks.get(id) ?? null,
      });
      const u = j.usage;
      out.push({
        id: j.id,
        repo: once(j.repo),
        todo_id: once(j.todo_id),
        stage: once(j.stage),
        status: once(j.status),
        agent_sessions: j.agent_sessions,
        pid: j.pid,
        host: once(j.host),
        heartbeat_at: j.heartbeat_at,
        usage: u.input_tokens === 0 && u.output_tokens === 0 && u.cost === 0 ? NO_USAGE : u,
        started_at: j.started_at,
        updated_at: j.updated_at,
        completed_at: j.completed_at,
        failure_reason: j.failure_reason,
        landed: j.landed,
        land_conflict: j.land_conflict,
        landing: j.landing,
        to_land: j.to_land,
        asking: j.asking,
        waited_ms: j.waited_ms,
        card: true,
        iterations: iterations.get(id) ?? NO_ITERATIONS,
      });
    }
    return out;
  }

  /** Whole jobs for `rows`, their children selected by `sub` (a condition on job_id) with `params`. */
  function assemble(rows: Row[], sub: string, params: SQLInputValue[]): Job[] {
    const changes = q(`SELECT * FROM changes WHERE ${sub} ORDER BY job_id, seq`).all(...params) as (Row & {
      job_id: string;
      seq: number;
    })[];
    const commits = q(
      `SELECT ${COMMIT_COLUMNS} FROM commits WHERE ${sub} ORDER BY job_id, change_seq, seq`,
    ).all(...params) as CommitRow[];
    const reviews = q(`SELECT * FROM reviews WHERE ${sub}`).all(...params) as ReviewRow[];
    const agents = q(`SELECT * FROM agent_sessions WHERE ${sub} ORDER BY job_id, seq`).all(
      ...params,
    ) as (Row & {
      job_id: string;
    })[];

    // Open requests only, oldest first: a later one (the newest) wins.
    const asks = q(`SELECT * FROM permission_asks WHERE ${sub} AND outcome IS NULL ORDER BY job_id, id`).all(
      ...params,
    ) as (Row & { job_id: string })[];
    const askByJob = new Map<string, PermissionAsk>();
    for (const a of asks) askByJob.set(a.job_id, ASK.read(a, undefined));

    const reviewByKey = new Map<string, JobReview>();
    for (const r of reviews)
      reviewByKey.set(`${r.job_id}\0${r.change_seq}\0${r.commit_seq}`, REVIEW.read(r, undefined));
    const changesByJob = new Map<string, Map<number, JobChange>>();
    for (const c of changes) {
      let m = changesByJob.get(c.job_id);
      if (!m) changesByJob.set(c.job_id, (m = new Map()));
      m.set(c.seq, CHANGE.read(c, { commits: [] }));
    }
    for (const c of commits) {
      const change = changesByJob.get(c.job_id)?.get(c.change_seq);
      if (!change) continue;
      const review = reviewByKey.get(`${c.job_id}\0${c.change_seq}\0${c.seq}`) ?? null;
      change.commits.push(COMMIT.read(c, { review }));
    }
    const agentsByJob = new Map<string, AgentSessionRef[]>();
    for (const a of agents) {
      const ref = AGENT_SESSION.read(a, undefined);
      const list = agentsByJob.get(a.job_id);
      if (list) list.push(ref);
      else agentsByJob.set(a.job_id, [ref]);
    }
    return rows.map((r) =>
      JOB.read(r, {
        agent_sessions: agentsByJob.get(r.id as string) ?? [],
        changes: [...(changesByJob.get(r.id as string)?.values() ?? [])],
        asking: askByJob.get(r.id as string) ?? null,
      }),
    );
  }

  function listWhere(
    repo: string,
    opts: { activeOnly?: boolean; status?: JobStatus; toLand?: boolean },
  ): [string, SQLInputValue[]] {
    if (opts.status) return ['repo = ? AND status = ?', [repo, opts.status]];
    if (opts.activeOnly && opts.toLand)
      return [
        "repo = ? AND (status = 'active' OR (status = 'completed' AND to_land = 1 AND landed IS NULL))",
        [repo],
      ];
    return opts.activeOnly ? ["repo = ? AND status = 'active'", [repo]] : ['repo = ?', [repo]];
  }

  /** The new job's row (inside the caller's transaction). */
  function insertJob(repo: string, input: NewJob): Job {
    let id = shortId(input.todo_id);
    while (jobRow.get(id)) id = shortId(input.todo_id);
    const now = nowIso();
    q(
      `INSERT INTO jobs (id, repo, todo_id, session_id, stage, status, base_rev, workspace_path, auto_commit,
         pid, host, heartbeat_at, started_at, updated_at, retried_from, to_land, changed_version)
       VALUES (?,?,?,?,'implementing','active',?,?,?,?,?,?,?,?,?,?, ${NEXT_VERSION})`,
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
      input.to_land ? 1 : 0,
    );
    jobTextLater(db, id);
    return mustGet(id);
  }

  function mustGet(id: string): Job {
    const job = load('id = ?', [id])[0];
    if (!job) throw new UserError(`no job ${id}`);
    return job;
  }

  function touch(id: string, set = '', params: SQLInputValue[] = []): void {
    const res = q(
      `UPDATE jobs SET ${set}${set ? ', ' : ''}updated_at = ?, changed_version = ${NEXT_VERSION}, list_json = NULL WHERE id = ?`,
    ).run(...params, nowIso(), id);
    if (res.changes === 0) throw new UserError(`no job ${id}`);
    // touch is every mutation's last write: the job's listing text is made after it (job-json.ts).
    jobTextLater(db, id);
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
    );
    if (!c) throw new Error(`job ${id}: commit ${change}/${seq} vanished`);
    const r = q('SELECT * FROM reviews WHERE job_id = ? AND change_seq = ? AND commit_seq = ?').get(
      id,
      change,
      seq,
    );
    return COMMIT.read(c, { review: r ? REVIEW.read(r, undefined) : null });
  }

  const store: JobStore = {
    create(repo, input: NewJob) {
      return transaction(db, () => insertJob(repo, input));
    },
    briefs(repo) {
      return briefs(q(BRIEFS).all(repo));
    },
    briefsChangedAfter(repo, after) {
      return briefs(q(BRIEFS_CHANGED).all(repo, after));
    },
    claim(repo, input, check) {
      return transaction(db, () => {
        // What a claim is decided on, and no more: the todo, its deps and
        // their jobs. Reading every todo and job of the repository here took
        // 30-60 ms inside the write lock with 10,000 todos, on every claim.
        const own = q('SELECT * FROM todos WHERE repo = ? AND id = ?').get(repo, input.todo_id) as
          TodoRow | undefined;
        const ids = JSON.stringify(own ? [own.id, ...(JSON.parse(own.deps) as string[])] : [input.todo_id]);
        const todos = (
          q('SELECT * FROM todos WHERE repo = ? AND id IN (SELECT value FROM json_each(?))').all(
            repo,
            ids,
          ) as unknown as TodoRow[]
        ).map(toTodo);
        const jobs = briefs(q(`${BRIEFS} AND j.todo_id IN (SELECT value FROM json_each(?))`).all(repo, ids));
        const refusal = check(todos, jobs);
        if (refusal !== null) throw new ClaimRefused(refusal);
        const job = insertJob(repo, input);
        q(
          `UPDATE todos SET status = 'in_progress', updated_at = ?, changed_version = ${NEXT_VERSION} WHERE repo = ? AND id = ?`,
        ).run(nowIso(), repo, input.todo_id);
        // A new job of the todo (a retry) supersedes an older one still to
        // land: a landing runner landing both would put the todo's work on
        // the branch twice. The older one's commits are kept (ii job land).
        const superseded = q(
          `SELECT id FROM jobs WHERE repo = ? AND todo_id = ? AND id != ? AND to_land = 1 AND landed IS NULL`,
        ).all(repo, input.todo_id, job.id) as { id: string }[];
        for (const old of superseded) touch(old.id, 'to_land = 0');
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
    listShown: (repo, opts = {}) => jobsShown(db, ...listWhere(repo, opts)),
    eachShown: (repo, opts, part) => eachJobShown(db, ...listWhere(repo, opts), part),
    // `+repo` keeps SQLite off the repo index: jobs_changed finds the few changed jobs.
    listChangedAfter: (after, repo = null) =>
      repo ? load('+repo = ? AND changed_version > ?', [repo, after]) : load('changed_version > ?', [after]),
    listCards: (repo) => (repo ? cards('repo = ?', [repo]) : cards('1 = 1', [])),
    listAll: (opts = {}) => (opts.activeOnly ? load("status = 'active'", []) : load('1 = 1', [])),
    setStage: (id, stage) =>
      transaction(db, () => {
        touch(id, 'stage = ?', [stage]);
      }),
    setFeedback: (id, feedback) =>
      transaction(db, () => {
        touch(id, 'feedback = ?', [feedback]);
      }),
    setBaseBranch: (id, branch) =>
      transaction(db, () => {
        touch(id, 'base_branch = ?', [branch]);
      }),
    setLanded: (id, landed) =>
      transaction(db, () => {
        touch(id, 'landed = ?, land_conflict = NULL, landing = NULL, to_land = 0', [JSON.stringify(landed)]);
        return mustGet(id);
      }),
    // jobs_to_land holds only the jobs to land, in listing order; `+status`
    // keeps SQLite off jobs_repo (every completed job of the repo). A landing
    // runner asks on every look at the store: with 10,000 completed jobs
    // (4 to land) a call took 25 ms, now 0.6 ms (loaded 2-core machine).
    toLand: (repo) => load("repo = ? AND to_land = 1 AND +status = 'completed' AND landed IS NULL", [repo]),
    takeLanding: (id, landing, live) =>
      transaction(db, () => {
        const row = q('SELECT landed, landing FROM jobs WHERE id = ?').get(id) as
          { landed: string | null; landing: string | null } | undefined;
        if (!row) throw new UserError(`no job ${id}`);
        if (row.landed !== null) return { ok: false, landed: true, by: null };
        const by = row.landing ? (JSON.parse(row.landing) as JobLanding) : null;
        if (by?.state === 'landing' && live(by)) return { ok: false, landed: false, by };
        touch(id, 'landing = ?', [JSON.stringify(landing)]);
        return { ok: true };
      }),
    setLandConflict: (id, conflict) =>
      transaction(db, () => {
        touch(id, 'land_conflict = ?', [conflict ? JSON.stringify(conflict) : null]);
      }),
    setLanding: (id, landing) =>
      transaction(db, () => {
        touch(id, 'landing = ?', [landing ? JSON.stringify(landing) : null]);
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
    recordedChangeIds: () =>
      new Set(
        (q('SELECT DISTINCT change_id FROM changes').all() as { change_id: string }[]).map(
          (r) => r.change_id,
        ),
      ),
    appendCommit: (id, c) =>
      transaction(db, () => {
        const { change, commit } = currentSeqs(id);
        const given: Partial<JobCommit> = {
          ...c,
          id: c.id || iterationId(),
          created_at: c.created_at ?? nowIso(),
        };
        given.usage = normalizeUsage(c.usage ?? ZERO_USAGE);
        // What the caller left out gets the model's default (the codec's fallback).
        const values = COMMIT.writes.map((w) => w.encode(given[w.key] ?? w.fallback()));
        q(INSERT_COMMIT).run(id, change, commit + 1, ...values);
        if (c.review) writeReview(id, change, commit + 1, c.review);
        // A new row has no text: touch has it made with the job's (job-json.ts).
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
        const given: Partial<JobCommit> = { ...u, usage: u.usage && normalizeUsage(u.usage) };
        for (const w of COMMIT.writes) if (given[w.key] !== undefined) set(w.col, w.encode(given[w.key]));
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
        commitTextLater(db, id, change, commit);
        touch(id);
        return readCommit(id, change, commit);
      }),
    setProjectReview: (id, review) =>
      transaction(db, () => {
        touch(id, 'project_review = ?', [JSON.stringify(review)]);
      }),
    addUsage: (id, u) =>
      transaction(db, () => {
        addToTotal(id, normalizeUsage(u));
      }),
    finish: (id, status, reason = null) =>
      transaction(db, () => {
        const now = nowIso();
        const waited = cancelOpenAsks(db, id, new Date(now));
        // Only a completed job with commits has anything to land: the intent
        // goes with any other end, so no landing runner waits on it.
        touch(
          id,
          `status = ?, completed_at = ?, failure_reason = ?, waited_ms = waited_ms + ?,
           to_land = CASE WHEN ? = 'completed' AND EXISTS (SELECT 1 FROM commits c WHERE c.job_id = jobs.id)
             THEN to_land ELSE 0 END`,
          [status, now, reason, waited, status],
        );
        return mustGet(id);
      }),
    finishOrphan: (id, runner, status, reason) =>
      transaction(db, () => {
        // Only the job as it was judged: still active, still this runner's.
        // Another process may have ended it first, or a landing resumed it
        // under a live runner of its own, since the caller looked.
        const row = q('SELECT status, pid, host FROM jobs WHERE id = ?').get(id) as
          { status: string; pid: number | null; host: string | null } | undefined;
        if (!row || row.status !== 'active' || row.pid !== runner.pid || row.host !== runner.host)
          return null;
        const now = nowIso();
        const waited = cancelOpenAsks(db, id, new Date(now));
        touch(id, 'status = ?, completed_at = ?, failure_reason = ?, waited_ms = waited_ms + ?', [
          status,
          now,
          reason,
          waited,
        ]);
        return mustGet(id);
      }),
    resume: (id, pid, host, sessionId) =>
      transaction(db, () => {
        const set =
          "status = 'active', stage = 'implementing', completed_at = NULL, failure_reason = NULL, feedback = NULL, pid = ?, host = ?, heartbeat_at = ?, runner_start = NULL";
        if (sessionId) touch(id, `${set}, session_id = ?`, [pid, host, nowIso(), sessionId]);
        else touch(id, set, [pid, host, nowIso()]);
      }),
    heartbeat(id, pid, host, startTicks) {
      transaction(db, () => {
        const now = nowIso();
        // The runner's identity goes with its pid, or is dropped when not told.
        const ident = startTicks != null ? `${pid}:${startTicks}` : null;
        q(
          `UPDATE jobs SET pid = ?, host = ?, heartbeat_at = ?, runner_start = ?, changed_version = ${NEXT_VERSION}, list_json = NULL WHERE id = ?`,
        ).run(pid, host, now, ident, id);
        jobTextLater(db, id);
      });
    },
    runnerStart(id) {
      const row = q('SELECT pid, runner_start FROM jobs WHERE id = ?').get(id) as
        { pid: number | null; runner_start: string | null } | undefined;
      const m = /^(\d+):(\d+)$/.exec(row?.runner_start ?? '');
      // Only while it is about the pid the job names now.
      return m && row && Number(m[1]) === row.pid ? Number(m[2]) : null;
    },
    activeRunners(repo) {
      return q("SELECT id, todo_id, status, pid, host FROM jobs WHERE repo = ? AND status = 'active'").all(
        repo,
      ) as unknown as ReturnType<JobStore['activeRunners']>;
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
