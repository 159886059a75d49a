// How many round trips a whole job's read costs on PostgreSQL: the job's
// row, then its changes, commits, reviews, agent sessions and open request
// together (Q.many), whatever the count of jobs. A shared store's dashboard
// reads the jobs of every notice this way, and each query is a write to the
// server's socket, a third of a busy board's CPU (bench/shared-store.bench.js).
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { textArray } from '../../src/state/pg/db.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';

const server = pgServer();
const T = '2026-01-01T00:00:00.000Z';

/** Counts the queries this process sends (every pg.Client's). */
const sent = { n: 0 };
const query = pg.Client.prototype.query;
let counting = false;
function countQueries(): void {
  if (counting) return;
  counting = true;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    sent.n++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
}
afterEach(() => {
  pg.Client.prototype.query = query;
  counting = false;
});

describe.skipIf(!server)(
  `reading whole jobs on PostgreSQL${server ? '' : ` (skipped: ${pgWhyNot()})`}`,
  () => {
    const db = usePgDatabase();

    it('reads jobs whole in two round trips, however many and whatever they hold', async () => {
      const s = await db.open();
      const ids: string[] = [];
      for (const title of ['one', 'two']) {
        const todo = await s.todos.create('r', { title });
        const job = await s.jobs.claim('r', { todo_id: todo.id, pid: 7, host: 'h1' }, () => null);
        await s.jobs.addAgentSession(job.id, {
          purpose: 'implement',
          id: `a-${title}`,
          transcript: '/t.jsonl',
          started_at: T,
        });
        await s.jobs.appendChange(job.id, `ch-${title}`);
        await s.jobs.appendCommit(job.id, { commit_id: `c-${title}`, created_at: T });
        await s.jobs.updateCurrentCommit(job.id, {
          review: { outcome: 'ACCEPT', comments: 'fine', agent_session_id: 'r1', reviewed_at: T },
        });
        ids.push(job.id);
      }
      countQueries();
      const before = sent.n;
      const jobs = await s.jobs.listChangedAfter(0, 'r');
      expect(sent.n - before).toBe(2);
      expect(jobs.map((j) => j.id).sort()).toEqual([...ids].sort());
      for (const j of jobs) {
        expect(j.agent_sessions).toHaveLength(1);
        expect(j.changes).toHaveLength(1);
        expect(j.changes[0]!.commits).toHaveLength(1);
        expect(j.changes[0]!.commits[0]!.review?.outcome).toBe('ACCEPT');
      }
      // One job by its id: the same two.
      const one = sent.n;
      expect((await s.jobs.get(ids[0]!))?.changes[0]?.commits[0]?.commit_id).toBe('c-one');
      expect(sent.n - one).toBe(2);
    });

    it('writes ids into the SQL text as one array constant that reads back as they were', async () => {
      const odd = ['plain', 'a"quote', 'back\\slash', "single'quote", 'comma,{brace}', 'NULL', ''];
      const rows = await db.query<{ v: string }>(`SELECT unnest(${textArray(odd)}) AS v`);
      expect(rows.map((r) => r.v)).toEqual(odd);
    });
  },
);
