// Each job's events and transcripts as lines (api.ts JobLogStore) in SQLite.
// The runner writes them here only when the store is shared (PostgreSQL): on
// SQLite a job's files are on this machine already. The table keeps the two
// schemas one, a copy between the drivers carries the lines, and the
// both-driver suite holds this store to the same rules as PostgreSQL's.
import type { DatabaseSync } from 'node:sqlite';
import type { JobLogStore, StoredLogLine } from '../api.js';
import { statements, transaction } from './db.js';

export function sqliteJobLogStore(db: DatabaseSync): JobLogStore {
  // Prepared on first use (statements() caches them): a command that reads no log compiles none.
  const st = statements(db);
  return {
    append(jobId, stream, lines) {
      if (lines.length === 0) return 0;
      // The write lock (BEGIN IMMEDIATE) orders appenders: the numbers follow on from the last committed.
      return transaction(
        db,
        () => {
          const last = (
            st('SELECT coalesce(max(seq), 0) AS seq FROM job_logs WHERE job_id = ?').get(jobId) as {
              seq: number;
            }
          ).seq;
          st(
            'INSERT INTO job_logs (job_id, seq, stream, line) SELECT ?, ? + key + 1, ?, value FROM json_each(?)',
          ).run(jobId, last, stream, JSON.stringify(lines));
          return last + lines.length;
        },
        false,
      );
    },
    read(jobId, o = {}) {
      const after = o.after ?? 0;
      const limit = o.limit ?? -1;
      return (o.stream === undefined
        ? st('SELECT seq, stream, line FROM job_logs WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(
            jobId,
            after,
            limit,
          )
        : st(
            'SELECT seq, stream, line FROM job_logs WHERE job_id = ? AND stream = ? AND seq > ? ORDER BY seq LIMIT ?',
          ).all(jobId, o.stream, after, limit)) as unknown as StoredLogLine[];
    },
    heads(jobIds) {
      const out: Record<string, number> = {};
      if (jobIds.length === 0) return out;
      const rows = st(
        'SELECT job_id, max(seq) AS seq FROM job_logs WHERE job_id IN (SELECT value FROM json_each(?)) GROUP BY job_id',
      ).all(JSON.stringify(jobIds)) as { job_id: string; seq: number }[];
      for (const r of rows) out[r.job_id] = r.seq;
      return out;
    },
  };
}
