// Jobs and their history on PostgreSQL: sqlite/jobs.ts's rules, one
// transaction per mutation. Rows become model objects through the same codec
// tables (sqlite/job-codec.ts): the schema's types match SQLite's, so a row
// reads alike from either driver.
//
// Where SQLite took its one write lock, rows are locked: a claim locks its
// todo with FOR UPDATE SKIP LOCKED (a second claimer of the same todo is
// refused at once, and goes on to another todo, instead of queueing behind
// the first), a landing or an orphan's cleanup locks its job's row.
import { ClaimRefused, UserError } from '../../errors.js';
import type { JobBrief } from '../../model/backlog.js';
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
import type { PermissionAsk } from '../../model/permission-ask.js';
import { matchPrefix } from '../../model/prefix.js';
import { MAX_MICROS, normalizeUsage, toMicros, ZERO_USAGE } from '../../model/usage.js';
import { SHOWN_RULES, shownAsIs, shownJsonText } from '../../text/json.js';
import type { CommitUpdate, NewJob } from '../api.js';
import type { AsyncJobStore } from '../async-api.js';
import { iterationId, nowIso, shortId } from '../ids.js';
import type { Row as CodecRow } from '../sqlite/codec.js';
import { ASK } from '../sqlite/ask-codec.js';
import { AGENT_SESSION, BRIEF, CHANGE, COMMIT, JOB, REVIEW } from '../sqlite/job-codec.js';
import { toTodo, type TodoRow } from '../sqlite/todos.js';
import { cancelOpenAsks } from './asks.js';
import { toJobCard } from '../../model/job-card.js';
import type { Param, PgDb, Q, Row, Tx } from './db.js';
import { textArray } from './db.js';

const asCodec = (r: Row): CodecRow => r as CodecRow;

const BRIEF_COLS = BRIEF.cols.filter((c) => c !== 'iteration' && c !== 'unlanded' && c !== 'committed');
// jobs.id is COLLATE "C" and the tables keyed by job_id are not: compared as
// they are, the two collations keep the planner off those tables' indexes
// (a seq scan of commits per job: 1 s for 1,000 jobs / 10,000 commits,
// ii todo list 9x SQLite). Compared in job_id's collation, they are used (10 ms).
const JOB_ID = 'j.id COLLATE "default"';
/**
 * What the backlog needs of each job of a repo (model/backlog.ts); flags as
 * 0/1, as SQLite gives them. `repo`: the repository as SQL (a parameter, or
 * a quoted constant for Q.many).
 */
export const briefsOf = (repo: string): string => `SELECT ${BRIEF_COLS.map((c) => `j.${c}`).join(', ')},
    (SELECT COUNT(*) FROM commits c WHERE c.job_id = ${JOB_ID}
       AND c.change_seq = (SELECT MAX(seq) FROM changes WHERE job_id = ${JOB_ID})) AS iteration,
    CASE WHEN j.status = 'completed' AND j.landed IS NULL
       AND EXISTS (SELECT 1 FROM commits c WHERE c.job_id = ${JOB_ID}) THEN 1 ELSE 0 END AS unlanded,
    CASE WHEN EXISTS (SELECT 1 FROM commits c WHERE c.job_id = ${JOB_ID}) THEN 1 ELSE 0 END AS committed
  FROM jobs j WHERE j.repo = ${repo}`;
const BRIEFS = briefsOf('$1');
export const briefs = (rows: Row[]): JobBrief[] => rows.map((r) => BRIEF.read(asCodec(r), undefined));

export const JOB_COLUMNS = JOB.cols.join(', ');
const COMMIT_COLUMNS = ['job_id', 'change_seq', 'seq', ...COMMIT.cols].join(', ');
const INSERT_COMMIT = `INSERT INTO commits (job_id, change_seq, seq, ${COMMIT.writes.map((w) => w.col).join(', ')})
  VALUES ($1, $2, $3, ${COMMIT.writes.map((_, i) => `$${i + 4}`).join(', ')})`;

type Where = [sql: string, params: Param[]];

/**
 * The reads of the children of the jobs whose ids `ids` gives (SQL: a text[]
 * constant, or ARRAY(SELECT …)), in the order jobsOfRows takes them.
 */
export const childReads = (ids: string): string[] => [
  `SELECT * FROM changes WHERE job_id = ANY(${ids}) ORDER BY job_id, seq`,
  `SELECT ${COMMIT_COLUMNS} FROM commits WHERE job_id = ANY(${ids}) ORDER BY job_id, change_seq, seq`,
  `SELECT * FROM reviews WHERE job_id = ANY(${ids})`,
  `SELECT * FROM agent_sessions WHERE job_id = ANY(${ids}) ORDER BY job_id, seq`,
  // Open requests only, oldest first: a later one (the newest) wins.
  `SELECT * FROM permission_asks WHERE job_id = ANY(${ids}) AND outcome IS NULL ORDER BY job_id, id`,
];

/** Whole jobs from their rows and childReads' answers (children of other jobs are passed over). */
export function jobsOfRows(rows: Row[], children: Row[][]): Job[] {
  const [changes = [], commits = [], reviews = [], agents = [], asks = []] = children;
  const reviewByKey = new Map<string, JobReview>();
  for (const r of reviews)
    reviewByKey.set(`${r.job_id}\0${r.change_seq}\0${r.commit_seq}`, REVIEW.read(asCodec(r), undefined));
  const changesByJob = new Map<string, Map<number, JobChange>>();
  for (const c of changes) {
    let m = changesByJob.get(c.job_id as string);
    if (!m) changesByJob.set(c.job_id as string, (m = new Map()));
    m.set(c.seq as number, CHANGE.read(asCodec(c), { commits: [] }));
  }
  for (const c of commits) {
    const change = changesByJob.get(c.job_id as string)?.get(c.change_seq as number);
    if (!change) continue;
    const review = reviewByKey.get(`${c.job_id}\0${c.change_seq}\0${c.seq}`) ?? null;
    change.commits.push(COMMIT.read(asCodec(c), { review }));
  }
  const askByJob = new Map<string, PermissionAsk>();
  for (const a of asks) askByJob.set(a.job_id as string, ASK.read(asCodec(a), undefined));
  const agentsByJob = new Map<string, AgentSessionRef[]>();
  for (const a of agents) {
    const ref = AGENT_SESSION.read(asCodec(a), undefined);
    const list = agentsByJob.get(a.job_id as string);
    if (list) list.push(ref);
    else agentsByJob.set(a.job_id as string, [ref]);
  }
  return rows.map((r) =>
    JOB.read(asCodec(r), {
      agent_sessions: agentsByJob.get(r.id as string) ?? [],
      changes: [...(changesByJob.get(r.id as string)?.values() ?? [])],
      asking: askByJob.get(r.id as string) ?? null,
    }),
  );
}

export function pgJobStore(db: PgDb): AsyncJobStore {
  /** Whole jobs for a condition on `jobs` (its parameters $1…), newest first: two round trips whatever the count. */
  async function load(e: Q, [where, params]: Where): Promise<Job[]> {
    const rows = await e.q(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE ${where} ORDER BY started_at DESC, id`,
      params,
    );
    if (rows.length === 0) return [];
    // The ids as one array constant: the five reads go out together, one
    // round trip (Q.many) in place of five queries (each a write to the socket).
    return jobsOfRows(rows, await e.many(childReads(textArray(rows.map((r) => r.id as string)))));
  }

  async function mustGet(e: Q, id: string): Promise<Job> {
    const job = (await load(e, ['id = $1', [id]]))[0];
    if (!job) throw new UserError(`no job ${id}`);
    return job;
  }

  function listWhere(
    repo: string,
    opts: { activeOnly?: boolean; status?: JobStatus; toLand?: boolean },
  ): Where {
    if (opts.status) return ['repo = $1 AND status = $2', [repo, opts.status]];
    if (opts.activeOnly && opts.toLand)
      return [
        "repo = $1 AND (status = 'active' OR (status = 'completed' AND to_land = 1 AND landed IS NULL))",
        [repo],
      ];
    return opts.activeOnly ? ["repo = $1 AND status = 'active'", [repo]] : ['repo = $1', [repo]];
  }

  async function insertJob(t: Tx, repo: string, input: NewJob): Promise<Job> {
    let id = shortId(input.todo_id);
    while (await t.one('SELECT id FROM jobs WHERE id = $1', [id])) id = shortId(input.todo_id);
    const now = nowIso();
    await t.q(
      `INSERT INTO jobs (id, repo, todo_id, session_id, stage, status, base_rev, workspace_path, auto_commit,
         pid, host, heartbeat_at, started_at, updated_at, retried_from, to_land)
       VALUES ($1,$2,$3,$4,'implementing','active',$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)`,
      [
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
      ],
    );
    t.stampJob(id);
    return mustGet(t, id);
  }

  /** Every mutation's last write: sets `set` (its parameters $1…) and updated_at, and stamps the job. */
  async function touch(t: Tx, id: string, set = '', params: Param[] = []): Promise<void> {
    const n = params.length;
    const rows = await t.q(
      `UPDATE jobs SET ${set}${set ? ', ' : ''}updated_at = $${n + 1} WHERE id = $${n + 2} RETURNING id`,
      [...params, nowIso(), id],
    );
    if (rows.length === 0) throw new UserError(`no job ${id}`);
    t.stampJob(id);
  }

  async function currentSeqs(t: Tx, id: string): Promise<{ change: number; commit: number }> {
    const ch = (await t.one<{ s: number | null }>('SELECT MAX(seq) AS s FROM changes WHERE job_id = $1', [
      id,
    ]))!;
    if (ch.s == null) throw new Error(`job ${id} has no change to add a commit to`);
    const cm = (await t.one<{ s: number | null }>(
      'SELECT MAX(seq) AS s FROM commits WHERE job_id = $1 AND change_seq = $2',
      [id, ch.s],
    ))!;
    return { change: ch.s, commit: cm.s ?? 0 };
  }

  async function readCommit(t: Tx, id: string, change: number, seq: number): Promise<JobCommit> {
    const c = await t.one(
      `SELECT ${COMMIT_COLUMNS} FROM commits WHERE job_id = $1 AND change_seq = $2 AND seq = $3`,
      [id, change, seq],
    );
    if (!c) throw new Error(`job ${id}: commit ${change}/${seq} vanished`);
    const r = await t.one('SELECT * FROM reviews WHERE job_id = $1 AND change_seq = $2 AND commit_seq = $3', [
      id,
      change,
      seq,
    ]);
    return COMMIT.read(asCodec(c), { review: r ? REVIEW.read(asCodec(r), undefined) : null });
  }

  async function writeReview(t: Tx, id: string, change: number, commit: number, r: JobReview): Promise<void> {
    await t.q(
      `INSERT INTO reviews (job_id, change_seq, commit_seq, outcome, comments, agent_session_id, reviewed_at) VALUES ($1,$2,$3,$4,$5,$6,$7)
       ON CONFLICT (job_id, change_seq, commit_seq) DO UPDATE SET outcome = excluded.outcome, comments = excluded.comments,
         agent_session_id = excluded.agent_session_id, reviewed_at = excluded.reviewed_at`,
      [id, change, commit, r.outcome, r.comments, r.agent_session_id, r.reviewed_at],
    );
  }

  async function addToTotal(t: Tx, id: string, n: Usage): Promise<void> {
    await touch(
      t,
      id,
      'input_tokens = input_tokens + $1, output_tokens = output_tokens + $2, cost_micros = LEAST(cost_micros + $3, $4)',
      [n.input_tokens, n.output_tokens, toMicros(n.cost), MAX_MICROS],
    );
  }

  // Each job's listing text (jobs.list_json), as SQLite keeps it
  // (sqlite/job-json.ts): written at the end of every transaction that wrote
  // the job, from the job as load() gives it, so a listing joins stored texts
  // and is JSON.stringify(list()) by construction.
  db.beforeCommit = async (t, ids) => {
    for (const job of await load(t, ['id = ANY($1)', [ids]])) {
      // With the text, whether it is shown as it is (sqlite/job-json.ts).
      const text = JSON.stringify(job);
      await t.q('UPDATE jobs SET list_json = $1, list_shown = $2 WHERE id = $3', [
        text,
        shownAsIs(text) ? SHOWN_RULES : null,
        job.id,
      ]);
    }
  };

  /** `ii job list --json`'s text: the kept texts joined; a job with none yet (copied in, say) is loaded. */
  async function listJson([where, params]: Where): Promise<string> {
    // Usually every job has its text: the server joins them into one string.
    const kept = (await db.one<{ missing: number; json: string }>(
      `SELECT count(*) - count(list_json) AS missing,
         '[' || COALESCE(string_agg(list_json, ',' ORDER BY started_at DESC, id), '') || ']' AS json
       FROM jobs WHERE ${where}`,
      params,
    ))!;
    if (kept.missing === 0) return kept.json;
    return `[${(await listed(where, params)).map((r) => r.text).join(',')}]`;
  }

  /** listJson as shown: the texts found clean as they are, the others redacted and escaped (sqlite/job-json.ts). */
  async function listShown([where, params]: Where): Promise<Uint8Array> {
    const rows = await listed(where, params);
    return Buffer.from(`[${rows.map((r) => (r.clean ? r.text : shownJsonText(r.text))).join(',')}]`);
  }

  /**
   * Keeps the texts a listing had to make, so the next one joins them: a
   * copy that renames its repository (ii state migrate) drops every job's
   * text, and until each job was written again every ii job list loaded
   * them all (1,000 jobs / 10,000 commits: ~370 ms on PostgreSQL, ~110 ms
   * on SQLite). Only where there is still none: a writer that committed
   * meanwhile kept its own, newer one. A failure here loses nothing (the
   * listing is made all the same) and is not the listing's.
   */
  async function keepTexts(made: Map<string, string>): Promise<void> {
    const ids = [...made.keys()];
    const texts = ids.map((id) => made.get(id)!);
    try {
      await db.q(
        `UPDATE jobs SET list_json = u.text, list_shown = NULLIF(u.shown, 0)
         FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(id, text, shown)
         WHERE jobs.id = u.id COLLATE "C" AND jobs.list_json IS NULL`,
        // 0: not found clean, kept as NULL (the rules' number is never 0).
        [ids, texts, texts.map((t) => (shownAsIs(t) ? SHOWN_RULES : 0))],
      );
    } catch {
      // A read-only role, a lost connection: the next listing makes them again.
    }
  }

  /** Each job's kept text, newest first, loaded for one with none; clean when kept and found clean under today's rules. */
  async function listed(where: string, params: Param[]): Promise<{ text: string; clean: boolean }[]> {
    const rows = await db.q<{ id: string; list_json: string | null; list_shown: string | number | null }>(
      `SELECT id, list_json, list_shown FROM jobs WHERE ${where} ORDER BY started_at DESC, id`,
      params,
    );
    const missing = rows.filter((r) => r.list_json === null).map((r) => r.id);
    const made =
      missing.length > 0
        ? new Map((await load(db, ['id = ANY($1)', [missing]])).map((j) => [j.id, JSON.stringify(j)]))
        : new Map<string, string>();
    if (made.size > 0) await keepTexts(made);
    return rows.map((r) =>
      r.list_json === null
        ? { text: made.get(r.id) ?? 'null', clean: false }
        : { text: r.list_json, clean: Number(r.list_shown) === SHOWN_RULES },
    );
  }

  const set = (column: string) => (id: string, value: string | null) =>
    db.tx(async (t) => {
      await touch(t, id, `${column} = $1`, [value]);
    });
  const json = (v: unknown): string | null => (v == null ? null : JSON.stringify(v));

  const store: AsyncJobStore = {
    create: (repo, input) => db.tx((t) => insertJob(t, repo, input)),
    briefs: async (repo) => briefs(await db.q(BRIEFS, [repo])),
    briefsChangedAfter: async (repo, after) =>
      briefs(await db.q(`${BRIEFS} AND j.changed_version > $2`, [repo, after])),
    claim: (repo, input, check) =>
      db.tx(async (t) => {
        // The todo's row, locked: a claimer that finds it locked is refused at
        // once (SKIP LOCKED) and tries another todo, as a backlog runner does
        // when a claim is refused.
        const own = await t.one<TodoRow>(
          'SELECT * FROM todos WHERE repo = $1 AND id = $2 FOR UPDATE SKIP LOCKED',
          [repo, input.todo_id],
        );
        if (!own && (await t.one('SELECT 1 FROM todos WHERE repo = $1 AND id = $2', [repo, input.todo_id])))
          throw new ClaimRefused(`todo ${input.todo_id} is being claimed by another runner`);
        const ids = own ? [own.id, ...(JSON.parse(own.deps) as string[])] : [input.todo_id];
        const todos = (
          await t.q<TodoRow>('SELECT * FROM todos WHERE repo = $1 AND id = ANY($2)', [repo, ids])
        ).map(toTodo);
        const jobs = briefs(await t.q(`${BRIEFS} AND j.todo_id = ANY($2)`, [repo, ids]));
        const refusal = check(todos, jobs);
        if (refusal !== null) throw new ClaimRefused(refusal);
        const job = await insertJob(t, repo, input);
        await t.q("UPDATE todos SET status = 'in_progress', updated_at = $1 WHERE repo = $2 AND id = $3", [
          nowIso(),
          repo,
          input.todo_id,
        ]);
        t.stampTodo(repo, input.todo_id);
        // A retry supersedes an older job of the todo still to land (sqlite/jobs.ts).
        const superseded = await t.q<{ id: string }>(
          'SELECT id FROM jobs WHERE repo = $1 AND todo_id = $2 AND id != $3 AND to_land = 1 AND landed IS NULL',
          [repo, input.todo_id, job.id],
        );
        for (const old of superseded) await touch(t, old.id, 'to_land = 0');
        return job;
      }),
    get: async (id) => (await load(db, ['id = $1', [id]]))[0] ?? null,
    resolve: async (repo, prefix) => {
      const ids = await db.q<{ id: string }>('SELECT id FROM jobs WHERE repo = $1', [repo]);
      const m = matchPrefix(ids, prefix, (j) => j.id);
      if (m.kind === 'one') return mustGet(db, m.item.id);
      if (m.kind === 'none')
        throw new UserError(
          `no job matches "${prefix}" in this repository. List them with: ii job list --all`,
        );
      throw new UserError(
        `"${prefix}" matches ${m.items.length} jobs; type more of the id:\n` +
          m.items.map((j) => `  ${j.id}`).join('\n'),
      );
    },
    list: (repo, opts = {}) => load(db, listWhere(repo, opts)),
    // Made from the loaded jobs, so it is JSON.stringify(list()) by construction.
    listJson: (repo, opts = {}) => listJson(listWhere(repo, opts)),
    listShown: (repo, opts = {}) => listShown(listWhere(repo, opts)),
    eachShown: async (repo, opts, part) => part(await listShown(listWhere(repo, opts))),
    listChangedAfter: (after, repo = null) =>
      repo
        ? load(db, ['repo = $1 AND changed_version > $2', [repo, after]])
        : load(db, ['changed_version > $1', [after]]),
    // The board on PostgreSQL reads its copy in memory (dashboard/io/board-source.ts), not this.
    listCards: async (repo) => (await load(db, repo ? listWhere(repo, {}) : ['TRUE', []])).map(toJobCard),
    listAll: (opts = {}) => (opts.activeOnly ? load(db, ["status = 'active'", []]) : load(db, ['TRUE', []])),
    setStage: set('stage'),
    setFeedback: set('feedback'),
    setBaseBranch: set('base_branch'),
    setLanded: (id, landed) =>
      db.tx(async (t) => {
        await touch(t, id, 'landed = $1, land_conflict = NULL, landing = NULL, to_land = 0', [
          JSON.stringify(landed),
        ]);
        return mustGet(t, id);
      }),
    toLand: (repo) =>
      load(db, ["repo = $1 AND to_land = 1 AND status = 'completed' AND landed IS NULL", [repo]]),
    takeLanding: (id, landing, live) =>
      db.tx(async (t) => {
        const row = await t.one<{ landed: string | null; landing: string | null }>(
          'SELECT landed, landing FROM jobs WHERE id = $1 FOR UPDATE',
          [id],
        );
        if (!row) throw new UserError(`no job ${id}`);
        if (row.landed !== null) return { ok: false, landed: true, by: null };
        const by = row.landing ? (JSON.parse(row.landing) as JobLanding) : null;
        if (by?.state === 'landing' && live(by)) return { ok: false, landed: false, by };
        await touch(t, id, 'landing = $1', [JSON.stringify(landing)]);
        return { ok: true };
      }),
    setLandConflict: (id, conflict) => set('land_conflict')(id, json(conflict)),
    setLanding: (id, landing) => set('landing')(id, json(landing)),
    setSession: (id, session_id, workspace_path, base_rev) =>
      db.tx(async (t) => {
        if (base_rev !== undefined)
          await touch(t, id, 'session_id = $1, workspace_path = $2, base_rev = $3', [
            session_id,
            workspace_path,
            base_rev,
          ]);
        else await touch(t, id, 'session_id = $1, workspace_path = $2', [session_id, workspace_path]);
      }),
    addAgentSession: (id, ref) =>
      db.tx(async (t) => {
        // The job's row first: two sessions added at once queue on it for their seq.
        await t.q('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [id]);
        const s = (await t.one<{ s: number }>(
          'SELECT COALESCE(MAX(seq), 0) + 1 AS s FROM agent_sessions WHERE job_id = $1',
          [id],
        ))!;
        await t.q(
          'INSERT INTO agent_sessions (job_id, seq, purpose, id, transcript, started_at, usage) VALUES ($1,$2,$3,$4,$5,$6,$7)',
          [
            id,
            s.s,
            ref.purpose,
            ref.id,
            ref.transcript,
            ref.started_at ?? nowIso(),
            ref.usage ? JSON.stringify(normalizeUsage(ref.usage)) : null,
          ],
        );
        await touch(t, id);
      }),
    recordAgentUsage: (id, agentSessionId, usage) =>
      db.tx(async (t) => {
        const n = normalizeUsage(usage);
        await t.q('UPDATE agent_sessions SET usage = $1 WHERE job_id = $2 AND id = $3', [
          JSON.stringify(n),
          id,
          agentSessionId,
        ]);
        await addToTotal(t, id, n);
      }),
    appendChange: (id, change_id) =>
      db.tx(async (t) => {
        await t.q('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [id]);
        const s = (await t.one<{ s: number }>(
          'SELECT COALESCE(MAX(seq), 0) + 1 AS s FROM changes WHERE job_id = $1',
          [id],
        ))!;
        const now = nowIso();
        await t.q('INSERT INTO changes (job_id, seq, change_id, created_at) VALUES ($1,$2,$3,$4)', [
          id,
          s.s,
          change_id,
          now,
        ]);
        await touch(t, id);
        return { change_id, created_at: now, commits: [] };
      }),
    recordedChangeIds: async () =>
      new Set(
        (await db.q<{ change_id: string }>('SELECT DISTINCT change_id FROM changes')).map((r) => r.change_id),
      ),
    appendCommit: (id, c) =>
      db.tx(async (t) => {
        await t.q('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [id]);
        const { change, commit } = await currentSeqs(t, id);
        const given: Partial<JobCommit> = {
          ...c,
          id: c.id || iterationId(),
          created_at: c.created_at ?? nowIso(),
        };
        given.usage = normalizeUsage(c.usage ?? ZERO_USAGE);
        const values = COMMIT.writes.map((w) => w.encode(given[w.key] ?? w.fallback()) as Param);
        await t.q(INSERT_COMMIT, [id, change, commit + 1, ...values]);
        if (c.review) await writeReview(t, id, change, commit + 1, c.review);
        await touch(t, id);
        return readCommit(t, id, change, commit + 1);
      }),
    updateCurrentCommit: (id, u: CommitUpdate) =>
      db.tx(async (t) => {
        await t.q('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [id]);
        const { change, commit } = await currentSeqs(t, id);
        if (commit === 0) throw new Error(`job ${id}: the current change has no commit to update`);
        const sets: string[] = [];
        const params: Param[] = [];
        const given: Partial<JobCommit> = { ...u, usage: u.usage && normalizeUsage(u.usage) };
        for (const w of COMMIT.writes)
          if (given[w.key] !== undefined) {
            params.push(w.encode(given[w.key]) as Param);
            sets.push(`${w.col} = $${params.length}`);
          }
        if (sets.length > 0)
          await t.q(
            `UPDATE commits SET ${sets.join(', ')} WHERE job_id = $${params.length + 1} AND change_seq = $${params.length + 2} AND seq = $${params.length + 3}`,
            [...params, id, change, commit],
          );
        if (u.review !== undefined) {
          if (u.review) await writeReview(t, id, change, commit, u.review);
          else
            await t.q('DELETE FROM reviews WHERE job_id = $1 AND change_seq = $2 AND commit_seq = $3', [
              id,
              change,
              commit,
            ]);
        }
        await touch(t, id);
        return readCommit(t, id, change, commit);
      }),
    setProjectReview: (id, review) => set('project_review')(id, JSON.stringify(review)),
    addUsage: (id, u) =>
      db.tx(async (t) => {
        await addToTotal(t, id, normalizeUsage(u));
      }),
    finish: (id, status, reason = null) =>
      db.tx(async (t) => {
        const now = nowIso();
        const waited = await cancelOpenAsks(t, id, new Date(now));
        await touch(
          t,
          id,
          `status = $1, completed_at = $2, failure_reason = $3, waited_ms = waited_ms + $4,
           to_land = CASE WHEN $1 = 'completed' AND EXISTS (SELECT 1 FROM commits c WHERE c.job_id = jobs.id COLLATE "default")
             THEN to_land ELSE 0 END`,
          [status, now, reason, waited],
        );
        return mustGet(t, id);
      }),
    finishOrphan: (id, runner, status, reason) =>
      db.tx(async (t) => {
        const row = await t.one<{ status: string; pid: number | null; host: string | null }>(
          'SELECT status, pid, host FROM jobs WHERE id = $1 FOR UPDATE',
          [id],
        );
        if (!row || row.status !== 'active' || row.pid !== runner.pid || row.host !== runner.host)
          return null;
        const now = nowIso();
        const waited = await cancelOpenAsks(t, id, new Date(now));
        await touch(
          t,
          id,
          'status = $1, completed_at = $2, failure_reason = $3, waited_ms = waited_ms + $4',
          [status, now, reason, waited],
        );
        return mustGet(t, id);
      }),
    resume: (id, pid, host, sessionId) =>
      db.tx(async (t) => {
        const base =
          "status = 'active', stage = 'implementing', completed_at = NULL, failure_reason = NULL, feedback = NULL, pid = $1, host = $2, heartbeat_at = $3, runner_start = NULL";
        if (sessionId) await touch(t, id, `${base}, session_id = $4`, [pid, host, nowIso(), sessionId]);
        else await touch(t, id, base, [pid, host, nowIso()]);
      }),
    heartbeat: (id, pid, host, startTicks) =>
      db.tx(async (t) => {
        const ident = startTicks != null ? `${pid}:${startTicks}` : null;
        await t.q('UPDATE jobs SET pid = $1, host = $2, heartbeat_at = $3, runner_start = $4 WHERE id = $5', [
          pid,
          host,
          nowIso(),
          ident,
          id,
        ]);
        t.stampJob(id);
      }),
    runnerStart: async (id) => {
      const row = await db.one<{ pid: number | null; runner_start: string | null }>(
        'SELECT pid, runner_start FROM jobs WHERE id = $1',
        [id],
      );
      const m = /^(\d+):(\d+)$/.exec(row?.runner_start ?? '');
      return m && row && Number(m[1]) === row.pid ? Number(m[2]) : null;
    },
    activeRunners: (repo) =>
      db.q<Pick<JobBrief, 'id' | 'todo_id' | 'status' | 'pid' | 'host'>>(
        "SELECT id, todo_id, status, pid, host FROM jobs WHERE repo = $1 AND status = 'active'",
        [repo],
      ),
    version: async () =>
      (await db.one<{ value: number }>("SELECT value FROM meta WHERE key = 'version'"))!.value,
  };
  return store;
}
