// Permission requests waiting for a person on PostgreSQL: sqlite/asks.ts's
// rules. Each write stamps the job (its store version and listing text), so
// readers see it start and stop waiting. Where SQLite's one write lock made
// the first ending win, a writer locks the job's row and then the request's
// (FOR UPDATE; always in that order, so a close and the job's end never
// deadlock) and looks again at whether it is still open: a second closer
// waits for the first to commit, then finds it ended and changes nothing, so
// a wait is added to its job once; a request opened as its job ends is
// either cancelled by the end or opened after it, as on SQLite.
import { UserError } from '../../errors.js';
import type { AskOutcome, PermissionAsk } from '../../model/permission-ask.js';
import type { AsyncPermissionAskStore } from '../async-api.js';
import { nowIso } from '../ids.js';
import { ASK } from '../sqlite/ask-codec.js';
import type { Row as CodecRow } from '../sqlite/codec.js';
import type { PgDb, Q, Row, Tx } from './db.js';

const read = (r: Row | undefined): PermissionAsk | null => (r ? ASK.read(r as CodecRow, undefined) : null);

/** Locks the job's row for the transaction (the first lock a request's writer takes); false when there is no such job. */
const lockJob = async (t: Tx, jobId: string): Promise<boolean> =>
  (await t.q('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [jobId])).length > 0;

const waitedSince = (askedAt: string, now: Date): number =>
  Math.max(0, now.getTime() - Date.parse(askedAt)) || 0;

/**
 * Ends the job's open requests as `cancelled` when the job ends, inside the
 * caller's transaction (rows locked, so a racing answer either ends them
 * first or finds them ended); the time they waited, for the caller to add
 * to the job.
 */
export async function cancelOpenAsks(t: Tx, jobId: string, now: Date): Promise<number> {
  await lockJob(t, jobId);
  const open = await t.q<{ id: number; asked_at: string }>(
    'SELECT id, asked_at FROM permission_asks WHERE job_id = $1 AND outcome IS NULL ORDER BY id FOR UPDATE',
    [jobId],
  );
  let total = 0;
  for (const a of open) {
    const waited = waitedSince(a.asked_at, now);
    total += waited;
    await t.q(
      "UPDATE permission_asks SET outcome = 'cancelled', note = $1, answered_at = $2, waited_ms = $3 WHERE id = $4",
      ['the job ended while it waited', now.toISOString(), waited, a.id],
    );
  }
  return total;
}

export function pgPermissionAskStore(db: PgDb): AsyncPermissionAskStore {
  const get = async (e: Q, id: number) =>
    read(await e.one('SELECT * FROM permission_asks WHERE id = $1', [id]));

  async function touchJob(t: Tx, jobId: string, addWaited = 0): Promise<void> {
    const rows = await t.q(
      'UPDATE jobs SET waited_ms = waited_ms + $1, updated_at = $2 WHERE id = $3 RETURNING id',
      [addWaited, nowIso(), jobId],
    );
    if (rows.length === 0) throw new UserError(`no job ${jobId}`);
    t.stampJob(jobId);
  }

  return {
    open: (job_id, ask) =>
      db.tx(async (t) => {
        if (!(await lockJob(t, job_id))) throw new UserError(`no job ${job_id}`);
        const row = await t.one(
          `INSERT INTO permission_asks (job_id, tool_kind, title, command, paths, diff_preview, options, asked_at)
           VALUES ($1,$2,$3,$4,$5,$6,$7,$8) RETURNING *`,
          [
            job_id,
            ask.tool_kind,
            ask.title,
            ask.command,
            JSON.stringify(ask.paths),
            ask.diff_preview,
            JSON.stringify(ask.options),
            nowIso(),
          ],
        );
        await touchJob(t, job_id);
        return read(row)!;
      }),
    get: (id) => get(db, id),
    openFor: async (job_id) =>
      read(
        await db.one(
          'SELECT * FROM permission_asks WHERE job_id = $1 AND outcome IS NULL ORDER BY id DESC LIMIT 1',
          [job_id],
        ),
      ),
    list: async (job_id) =>
      (await db.q('SELECT * FROM permission_asks WHERE job_id = $1 ORDER BY id', [job_id])).map((r) =>
        read(r)!,
      ),
    close: (id, outcome: AskOutcome, note = null) =>
      db.tx(async (t) => {
        const jobId = (
          await t.one<{ job_id: string }>('SELECT job_id FROM permission_asks WHERE id = $1', [id])
        )?.job_id;
        if (!jobId) return null;
        await lockJob(t, jobId);
        // Locked, then read: a closer that waited on another reads it ended.
        const ask = read(await t.one('SELECT * FROM permission_asks WHERE id = $1 FOR UPDATE', [id]));
        if (!ask || ask.outcome !== null) return null;
        const now = new Date();
        const waited = waitedSince(ask.asked_at, now);
        const row = await t.one(
          'UPDATE permission_asks SET outcome = $1, note = $2, answered_at = $3, waited_ms = $4 WHERE id = $5 RETURNING *',
          [outcome, note, now.toISOString(), waited, id],
        );
        await touchJob(t, ask.job_id, waited);
        return read(row);
      }),
  };
}
