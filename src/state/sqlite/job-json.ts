// The JSON text of a job list, built by SQLite. `ii job list --json` on
// thousands of jobs spent most of its time making Job objects (tens of
// thousands of rows, a JSON.parse per stored JSON column) only to stringify
// them again; here SQLite writes the text directly, and each job's and each
// commit's text is kept in list_json by the writers, in the transaction of
// every mutation (refreshJobJson, refreshCommitJson), so a listing only joins
// stored texts. A row an older build wrote, with no text yet, is built on the
// fly.
//
// A stored text is only right for the build that wrote it: a change to what
// a job's or a commit's text holds must come with a migration that clears
// list_json in both tables (UPDATE ... SET list_json = NULL).
//
// The output must stay byte-identical to JSON.stringify of what `load` in
// jobs.ts returns (same keys, same order, same values): test/unit/job-json.test.ts
// compares the two, and the model-validated jobs, on a varied fixture. Change
// both together.
//
// Why splicing is exact:
// - json_quote() escapes strings exactly as JSON.stringify does (checked over
//   every code point in the test), and prints NULL as null and integers as
//   integers.
// - The JSON columns (files, usage, test_results, before, after,
//   project_review, agent usage) hold JSON.stringify output (every writer is
//   in jobs.ts), which JSON.parse + JSON.stringify gives back unchanged, so
//   they are spliced in as stored.
// - The cost column is the exception: it holds whole micro-dollars, and the
//   model's cost is dollars, which SQLite would print as 0.0 and 17 digits
//   where JavaScript prints 0 and the shortest round-trip form, so it goes
//   through a JavaScript function registered on the connection.
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { fromMicros } from '../../model/usage.js';
import { statements } from './db.js';

const MICROS_FN = 'ii_js_dollars';
const registered = new WeakSet<DatabaseSync>();

/**
 * A JSON object from [key, value] pairs, each value an SQL expression giving
 * the value's JSON text; a third element, a condition, makes the key optional
 * (absent, not null, when the condition is false). One concat() call, not a
 * chain of ||: each || copies the string built so far.
 */
function object(fields: [key: string, value: string, when?: string][]): string {
  const parts = fields.map(([k, v, when], i) => {
    const key = `'${i === 0 ? '{' : ','}"${k}":'`;
    if (when === undefined) return `${key}, ${v}`;
    if (i === 0) throw new Error('the first key of an object cannot be optional');
    return `CASE WHEN ${when} THEN ${key} || ${v} ELSE '' END`;
  });
  return `concat(${parts.join(', ')}, '}')`;
}
/**
 * A JSON array of `item` over the rows of `table` (aliased `alias`) matching
 * `where`, in `order`. The order is the ordered subquery's: SQLite runs it as
 * a co-routine feeding group_concat row by row, in an index's order here, where
 * group_concat(... ORDER BY) would sort every built string again (a third of
 * the query's time).
 */
const array = (item: string, table: string, alias: string, where: string, order: string): string =>
  `(SELECT '[' || COALESCE(group_concat(${item}, ','), '') || ']' FROM (SELECT * FROM ${table} WHERE ${where} ORDER BY ${order}) ${alias})`;
const str = (col: string): string => `json_quote(${col})`;
const bool = (col: string): string =>
  `CASE WHEN ${col} IS NULL THEN 'null' WHEN ${col} = 1 THEN 'true' ELSE 'false' END`;
/** A stored JSON column, `fallback` (JSON text) when NULL. */
const stored = (col: string, fallback: string): string => `COALESCE(${col}, '${fallback}')`;
const ZERO_USAGE = '{"input_tokens":0,"output_tokens":0,"cost":0}';

const review = object([
  ['outcome', str('r.outcome')],
  ['comments', str('r.comments')],
  ['agent_session_id', str('r.agent_session_id')],
  ['reviewed_at', str('r.reviewed_at')],
]);

const commit = object([
  ['commit_id', str('c.commit_id')],
  ['iteration_commit_id', str('c.iteration_commit_id')],
  ['draft_message', str('c.draft_message')],
  ['tests_passed', bool('c.tests_passed')],
  ['test_results', stored('c.test_results', '[]')],
  [
    'review',
    `COALESCE((SELECT ${review} FROM reviews r WHERE r.job_id = c.job_id AND r.change_seq = c.change_seq AND r.commit_seq = c.seq), 'null')`,
  ],
  ['agent_session_id', str('c.agent_session_id')],
  ['created_at', str('c.created_at')],
  ['files', stored('c.files', '[]')],
  ['usage', stored('c.usage', ZERO_USAGE)],
  ['feedback', str('c.feedback')],
  ['before', stored('c.before', 'null')],
  ['after', stored('c.after', 'null')],
]);

const change = object([
  ['change_id', str('ch.change_id')],
  ['created_at', str('ch.created_at')],
  [
    'commits',
    array(
      `COALESCE(c.list_json, ${commit})`,
      'commits',
      'c',
      'job_id = ch.job_id AND change_seq = ch.seq',
      'seq',
    ),
  ],
]);

const agentSession = object([
  ['purpose', str('a.purpose')],
  ['id', str('a.id')],
  ['transcript', str('a.transcript')],
  // Optional keys, present when set (load() tests them for truthiness).
  ['started_at', str('a.started_at'), "a.started_at IS NOT NULL AND a.started_at <> ''"],
  ['usage', 'a.usage', "a.usage IS NOT NULL AND a.usage <> ''"],
]);

const job = object([
  ['id', str('j.id')],
  ['repo', str('j.repo')],
  ['todo_id', str('j.todo_id')],
  ['session_id', str('j.session_id')],
  ['stage', str('j.stage')],
  ['status', str('j.status')],
  ['feedback', str('j.feedback')],
  ['agent_sessions', array(agentSession, 'agent_sessions', 'a', 'job_id = j.id', 'seq')],
  ['changes', array(change, 'changes', 'ch', 'job_id = j.id', 'seq')],
  ['project_review', stored('j.project_review', 'null')],
  ['pid', str('j.pid')],
  ['host', str('j.host')],
  ['heartbeat_at', str('j.heartbeat_at')],
  ['base_rev', str('j.base_rev')],
  ['workspace_path', str('j.workspace_path')],
  ['auto_commit', `CASE WHEN j.auto_commit = 1 THEN 'true' ELSE 'false' END`], // never null
  [
    'usage',
    object([
      ['input_tokens', str('j.input_tokens')],
      ['output_tokens', str('j.output_tokens')],
      ['cost', `${MICROS_FN}(j.cost_micros)`],
    ]),
  ],
  ['started_at', str('j.started_at')],
  ['updated_at', str('j.updated_at')],
  ['completed_at', str('j.completed_at')],
  ['failure_reason', str('j.failure_reason')],
  ['retried_from', str('j.retried_from')],
]);

function register(db: DatabaseSync): void {
  if (registered.has(db)) return;
  // A cost column holds whole micro-dollars; the model's cost is dollars (model/usage.ts).
  db.function(MICROS_FN, { deterministic: true }, (x) => JSON.stringify(fromMicros(Number(x))));
  registered.add(db);
}

/**
 * JSON.stringify(load(where, params)) without making the objects: the jobs
 * matching `where` (a condition on `jobs`), newest first.
 */
export function jobsJson(db: DatabaseSync, where: string, params: SQLInputValue[]): string {
  // Usually every job has its stored text: join those, in a small statement
  // (preparing the one that builds texts costs a CLI call several ms).
  const kept = statements(db)(
    `SELECT count(*) - count(list_json) AS missing, '[' || COALESCE(group_concat(list_json, ','), '') || ']' AS json
     FROM (SELECT list_json FROM jobs WHERE ${where} ORDER BY started_at DESC, id)`,
  ).get(...params) as { missing: number; json: string };
  if (kept.missing === 0) return kept.json;
  register(db);
  const sql = `SELECT '[' || COALESCE(group_concat(COALESCE(j.list_json, ${job}), ','), '') || ']' AS json
    FROM (SELECT * FROM jobs WHERE ${where} ORDER BY started_at DESC, id) j`;
  return (statements(db)(sql).get(...params) as { json: string }).json;
}

/**
 * Stores a commit's text (with its review) in commits.list_json; call it after
 * writing the commit or its review, before refreshJobJson. Keeping commit texts
 * makes a job's text a copy of stored pieces, so a mutation of a job with
 * hundreds of iterations does not rebuild every iteration's text.
 */
export function refreshCommitJson(db: DatabaseSync, jobId: string, changeSeq: number, seq: number): void {
  statements(db)(
    `UPDATE commits AS c SET list_json = ${commit} WHERE c.job_id = ? AND c.change_seq = ? AND c.seq = ?`,
  ).run(jobId, changeSeq, seq);
}

/** Stores job `id`'s text in jobs.list_json; call it last in every transaction that changes the job. */
export function refreshJobJson(db: DatabaseSync, id: string): void {
  register(db);
  statements(db)(`UPDATE jobs AS j SET list_json = ${job} WHERE j.id = ?`).run(id);
}
