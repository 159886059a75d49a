// Each job's events and transcripts as lines (api.ts JobLogStore) in
// PostgreSQL, so a dashboard or `ii job logs` on one machine reads the log of
// a job running on another. An append is one statement, one round trip: its
// lines take the numbers after the job's last committed line, and its notice
// (LISTEN/NOTIFY on ii_logs, "<job id> <last seq>") goes out when it commits.
//
// Two appenders of one job at once (a runner and a landing on two machines):
// both may read the same last number; the second one's insert waits on the
// first one's rows (the primary key), fails as a duplicate once it commits,
// and is made again after it. So a job's lines are committed in the order of
// their numbers, and a reader that saw seq n misses nothing by asking for
// what is after it.
import type { AsyncJobLogStore } from '../async-api.js';
import type { StoredLogLine } from '../api.js';
import type { PgDb } from './db.js';

/** The channel each append announces itself on (the store's versions are on ii_store: logs do not reload jobs). */
export const LOG_CHANNEL = 'ii_logs';

const UNIQUE_VIOLATION = '23505';

const APPEND = `
  WITH ins AS (
    INSERT INTO job_logs (job_id, seq, stream, line)
    SELECT $1, (SELECT coalesce(max(seq), 0) FROM job_logs WHERE job_id = $1) + u.n, $2, u.line
    FROM unnest($3::text[]) WITH ORDINALITY AS u(line, n)
    RETURNING seq
  )
  SELECT max(seq) AS seq, pg_notify('${LOG_CHANNEL}', $1 || ' ' || max(seq)) FROM ins`;

export function pgJobLogStore(db: PgDb): AsyncJobLogStore {
  return {
    async append(jobId, stream, lines) {
      if (lines.length === 0) return 0;
      for (let attempt = 1; ; attempt++) {
        try {
          // Not db.q: that asks again on a lost connection, and an insert
          // whose commit went through before the loss would be made twice.
          // The caller (log-shipper.ts) keeps the lines and tries again.
          const r = await db.pool.query(APPEND, [jobId, stream, [...lines]]);
          return (r.rows[0] as { seq: number }).seq;
        } catch (err) {
          if ((err as { code?: string }).code === UNIQUE_VIOLATION && attempt < 20) continue;
          throw db.explain(err);
        }
      }
    },
    async read(jobId, o = {}) {
      const after = o.after ?? 0;
      const limit = o.limit ?? null;
      return o.stream === undefined
        ? db.q<StoredLogLine>(
            'SELECT seq, stream, line FROM job_logs WHERE job_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
            [jobId, after, limit],
          )
        : db.q<StoredLogLine>(
            'SELECT seq, stream, line FROM job_logs WHERE job_id = $1 AND stream = $2 AND seq > $3 ORDER BY seq LIMIT $4',
            [jobId, o.stream, after, limit],
          );
    },
    async heads(jobIds) {
      const out: Record<string, number> = {};
      if (jobIds.length === 0) return out;
      const rows = await db.q<{ job_id: string; seq: number }>(
        'SELECT job_id, max(seq) AS seq FROM job_logs WHERE job_id = ANY($1) GROUP BY job_id',
        [[...jobIds]],
      );
      for (const r of rows) out[r.job_id] = r.seq;
      return out;
    },
  };
}

/** Calls `onAppend` with each job and its last seq as lines are appended, and with null when a lost connection comes back. */
export function watchJobLogs(
  db: PgDb,
  onAppend: (jobId: string | null, seq: number) => void,
): Promise<() => Promise<void>> {
  return db.listenTo(
    LOG_CHANNEL,
    (payload) => {
      const cut = payload.lastIndexOf(' ');
      if (cut > 0) onAppend(payload.slice(0, cut), Number(payload.slice(cut + 1)));
    },
    async () => onAppend(null, 0),
  );
}
