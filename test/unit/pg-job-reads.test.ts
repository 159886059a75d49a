// How many round trips a whole job's read costs on PostgreSQL: the job's
// row, then its changes, commits, reviews, agent sessions and open request
// together (Q.many), whatever the count of jobs; and a board's refresh in
// one (readBoard, state/pg/board-read.ts), answering as the store's own
// reads do. A shared store's dashboard reads the jobs of every notice this
// way, and each query is a write to the server's socket, a third of a busy
// board's CPU (bench/shared-store.bench.js).
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreMirror } from '../../src/dashboard/io/board-source.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { textArray } from '../../src/state/pg/db.js';
import { ASK } from '../helpers/permission-ask.js';
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

/** A job of `repo` with an agent session, a change and an accepted commit: rows in each table a whole job reads. */
async function reviewedJob(s: AsyncStateStore, repo: string, title: string) {
  const todo = await s.todos.create(repo, { title });
  const job = await s.jobs.claim(repo, { todo_id: todo.id, pid: 7, host: 'h1' }, () => null);
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
  return { todo, job };
}

describe.skipIf(!server)(
  `reading whole jobs on PostgreSQL${server ? '' : ` (skipped: ${pgWhyNot()})`}`,
  () => {
    const db = usePgDatabase();

    it('reads jobs whole in two round trips, however many and whatever they hold', async () => {
      const s = await db.open();
      const ids: string[] = [];
      for (const title of ['one', 'two']) ids.push((await reviewedJob(s, 'r', title)).job.id);
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

    /** What the store's own reads give for readBoard's question, one after another. */
    async function inSteps(s: AsyncStateStore, repo: string | null, after: number, whole: boolean) {
      const jobs =
        after < 0
          ? await (repo ? s.jobs.list(repo) : s.jobs.listAll())
          : await s.jobs.listChangedAfter(after, repo);
      return {
        jobs,
        briefs: repo ? await (whole ? s.jobs.briefs(repo) : s.jobs.briefsChangedAfter(repo, after)) : null,
        runners: repo ? await s.runners.list(repo) : null,
      };
    }
    const byId = <R extends { id: string | number }>(rows: readonly R[]): R[] =>
      [...rows].sort((x, y) => String(x.id).localeCompare(String(y.id)));

    /** reviewedJob, then a second commit and an open permission request. */
    async function busyJob(s: AsyncStateStore, repo: string, title: string) {
      const made = await reviewedJob(s, repo, title);
      await s.jobs.appendCommit(made.job.id, { commit_id: `c2-${title}`, created_at: T });
      await s.asks.open(made.job.id, ASK);
      return made;
    }

    it("reads a board's refresh in one round trip, answering as the store's reads do: for a repository and for all, whole and after a version", async () => {
      const s = await db.open();
      const a = await busyJob(s, 'r', 'a');
      await busyJob(s, 'other', 'o');
      await s.runners.register({ repo: 'r', pid: 9, host: 'h1', slots: 2, watch: true });
      const mid = await s.jobs.version();
      // a's todo is not written again (only its job): not read after mid.
      const b = await busyJob(s, 'r', 'b');
      await s.jobs.setStage(a.job.id, 'testing');
      const late = await s.todos.create('r', { title: 'not started' });
      if (!s.readBoard) throw new Error('the PostgreSQL store reads a board in one round trip');

      countQueries();
      const before = sent.n;
      const whole = await s.readBoard('r', -1, true);
      expect(sent.n - before).toBe(1);
      expect(whole.version).toBe(await s.jobs.version());
      const expected = await inSteps(s, 'r', -1, true);
      // Newest first, as the store lists them; each whole (children included).
      expect(whole.jobs).toEqual(expected.jobs);
      expect(whole.jobs.map((j) => j.todo_id)).toEqual([b.todo.id, a.todo.id]);
      expect(whole.jobs[0]!.changes[0]!.commits.map((c) => [c.commit_id, c.review?.outcome ?? null])).toEqual(
        [
          ['c-b', 'ACCEPT'],
          ['c2-b', null],
        ],
      );
      expect(whole.jobs[0]!.asking?.title).toBe('Run npm test');
      expect(whole.todos).toEqual(await s.todos.list('r'));
      expect(byId(whole.briefs!)).toEqual(byId(expected.briefs!));
      expect(whole.runners).toEqual(expected.runners);
      expect(whole.runners).toHaveLength(1);

      const since = await s.readBoard('r', mid, false);
      const expectedSince = await inSteps(s, 'r', mid, false);
      expect(since.jobs).toEqual(expectedSince.jobs);
      expect(byId(since.jobs).map((j) => j.id)).toEqual(byId([a.job, b.job]).map((j) => j.id));
      expect(byId(since.todos).map((t) => t.id)).toEqual(byId([b.todo, late]).map((t) => t.id));
      expect(byId(since.todos)).toEqual(byId(await s.todos.listChangedAfter('r', mid)));
      expect(byId(since.briefs!)).toEqual(byId(expectedSince.briefs!));

      // Every repository: every job, the todos of the jobs read, and no briefs or runners.
      const all = await s.readBoard(null, -1, true);
      expect(all.jobs).toEqual((await inSteps(s, null, -1, true)).jobs);
      expect(all.jobs).toHaveLength(3);
      expect(all.todos.map((t) => t.title).sort()).toEqual(['a', 'b', 'o']);
      expect([all.briefs, all.runners]).toEqual([null, null]);

      // Nothing written since: no job, no todo, no brief; the runners still.
      const now = await s.readBoard('r', whole.version, false);
      expect([now.version, now.jobs, now.todos, now.briefs]).toEqual([whole.version, [], [], []]);
      expect(now.runners).toHaveLength(1);
    });

    it("is the board's copy's one read per refresh", async () => {
      const s = await db.open();
      const board = await db.open();
      let reads = 0;
      const readBoard = board.readBoard!.bind(board);
      const version = board.jobs.version.bind(board.jobs);
      let versions = 0;
      const m = new StoreMirror(
        {
          ...board,
          readBoard: (...args) => (reads++, readBoard(...args)),
          jobs: { ...board.jobs, version: () => (versions++, version()) },
        },
        'r',
      );
      await m.load();
      const { job } = await busyJob(s, 'r', 'a');
      await m.refresh();
      expect(m.jobs.get(job.id)?.changes[0]?.commits).toHaveLength(2);
      expect(m.runners.list('r')).toEqual([]);
      await s.runners.register({ repo: 'r', pid: 9, host: 'h1', slots: 1, watch: false });
      await m.refresh();
      expect(m.runners.list('r')).toHaveLength(1);
      expect([reads, versions]).toEqual([3, 0]);
      await m.close();
    });
  },
);
