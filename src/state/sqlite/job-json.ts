// The JSON text of a job list, built by SQLite. `ii job list --json` on
// thousands of jobs spent most of its time making Job objects (tens of
// thousands of rows, a JSON.parse per stored JSON column) only to stringify
// them again; here SQLite writes the text directly, and each job's and each
// commit's text is kept in list_json by the writers, in the transaction of
// every mutation (refreshJobJson, refreshCommitJson), so a listing only joins
// stored texts. A row an older build wrote, with no text yet, is built on the
// fly.
//
// The texts are written from the same tables as the loader reads jobs with
// (job-codec.ts), so they are byte-identical to JSON.stringify of what `load`
// in jobs.ts returns: test/unit/job-json.test.ts compares the two on jobs that
// set every field.
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { registerCodec } from './codec.js';
import { statements } from './db.js';
import { COMMIT, JOB } from './job-codec.js';

const job = JOB.json('j');
const commit = COMMIT.json('c');

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
  registerCodec(db);
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
  registerCodec(db);
  statements(db)(`UPDATE jobs AS j SET list_json = ${job} WHERE j.id = ?`).run(id);
}
