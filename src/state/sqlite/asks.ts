// Permission requests waiting for a person (api.ts PermissionAskStore). Each
// write also stamps the job (changed_version, its listing text), so the
// board and `ii job list` see the job start and stop waiting.
import type { DatabaseSync } from 'node:sqlite';
import { UserError } from '../../errors.js';
import type { AskOutcome, PermissionAsk } from '../../model/permission-ask.js';
import type { PermissionAskStore } from '../api.js';
import { nowIso } from '../ids.js';
import { ASK } from './ask-codec.js';
import type { Row } from './codec.js';
import { NEXT_VERSION, statements, transaction } from './db.js';
import { jobTextLater } from './job-json.js';

/**
 * Ends the job's open requests as `cancelled` when the job ends (a runner
 * that died while it waited leaves one open), inside the caller's
 * transaction; the time they waited, for the caller to add to the job.
 */
export function cancelOpenAsks(db: DatabaseSync, jobId: string, now: Date): number {
  const q = statements(db);
  const open = q('SELECT id, asked_at FROM permission_asks WHERE job_id = ? AND outcome IS NULL').all(
    jobId,
  ) as {
    id: number;
    asked_at: string;
  }[];
  let total = 0;
  for (const a of open) {
    const waited = Math.max(0, now.getTime() - Date.parse(a.asked_at)) || 0;
    total += waited;
    q(
      "UPDATE permission_asks SET outcome = 'cancelled', note = ?, answered_at = ?, waited_ms = ? WHERE id = ?",
    ).run('the job ended while it waited', now.toISOString(), waited, a.id);
  }
  return total;
}

export function sqliteAskStore(db: DatabaseSync): PermissionAskStore {
  const q = statements(db);
  const read = (r: unknown): PermissionAsk | null => (r ? ASK.read(r as Row, undefined) : null);
  const get = (id: number) => read(q('SELECT * FROM permission_asks WHERE id = ?').get(id));

  function touchJob(jobId: string, addWaited = 0): void {
    const res = q(
      `UPDATE jobs SET waited_ms = waited_ms + ?, updated_at = ?, changed_version = ${NEXT_VERSION}, list_json = NULL WHERE id = ?`,
    ).run(addWaited, nowIso(), jobId);
    if (res.changes === 0) throw new UserError(`no job ${jobId}`);
    jobTextLater(db, jobId);
  }

  return {
    open: (job_id, ask) =>
      transaction(db, () => {
        const r = q(
          `INSERT INTO permission_asks (job_id, tool_kind, title, command, paths, diff_preview, options, asked_at)
           VALUES (?,?,?,?,?,?,?,?)`,
        ).run(
          job_id,
          ask.tool_kind,
          ask.title,
          ask.command,
          JSON.stringify(ask.paths),
          ask.diff_preview,
          JSON.stringify(ask.options),
          nowIso(),
        );
        touchJob(job_id);
        return get(Number(r.lastInsertRowid))!;
      }),
    get,
    openFor: (job_id) =>
      read(
        q('SELECT * FROM permission_asks WHERE job_id = ? AND outcome IS NULL ORDER BY id DESC LIMIT 1').get(
          job_id,
        ),
      ),
    list: (job_id) =>
      q('SELECT * FROM permission_asks WHERE job_id = ? ORDER BY id')
        .all(job_id)
        .map((r) => ASK.read(r, undefined)),
    close: (id, outcome: AskOutcome, note = null) =>
      transaction(db, () => {
        const ask = get(id);
        if (!ask || ask.outcome !== null) return null;
        const now = new Date();
        const waited = Math.max(0, now.getTime() - Date.parse(ask.asked_at)) || 0;
        q(
          'UPDATE permission_asks SET outcome = ?, note = ?, answered_at = ?, waited_ms = ? WHERE id = ? AND outcome IS NULL',
        ).run(outcome, note, now.toISOString(), waited, id);
        touchJob(ask.job_id, waited);
        return get(id);
      }),
  };
}
