// The board's read of a shared store in one round trip (state/pg/board-read.ts,
// AsyncStateStore.readBoard) answers as the store's own reads do, one after
// another (the way a board read before, and reads on any other store): the
// jobs with their changes, commits, reviews, agents and open request, the
// todos, briefs and runners, for a repository or every one, whole or after a
// version. And a board's copy (StoreMirror) reads with it once per refresh.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreMirror } from '../../src/dashboard/io/board-source.js';
import type { NewPermissionAsk } from '../../src/model/permission-ask.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { postgresDriver, type DriverFixture } from '../helpers/store-drivers.js';

const T = '2026-11-28T00:00:00.000Z';
const ASK: NewPermissionAsk = {
  tool_kind: 'execute',
  title: 'Run npm test',
  command: 'npm test',
  paths: [],
  diff_preview: null,
  options: [{ id: 'a1', name: 'Allow', kind: 'allow_once' }],
};
const byId = <R extends { id: string | number }>(rows: readonly R[]): R[] =>
  [...rows].sort((x, y) => String(x.id).localeCompare(String(y.id)));

/** A job of `repo` with a change, a reviewed commit, an agent session and an open request. */
async function busyJob(s: AsyncStateStore, repo: string, title: string) {
  const todo = await s.todos.create(repo, { title });
  const job = await s.jobs.claim(repo, { todo_id: todo.id, pid: 7, host: 'h1' }, () => null);
  await s.jobs.addAgentSession(job.id, {
    purpose: 'implement',
    id: `a-${title}`,
    transcript: '/t',
    started_at: T,
  });
  await s.jobs.appendChange(job.id, `ch-${title}`);
  await s.jobs.appendCommit(job.id, { commit_id: `c-${title}`, created_at: T } as never);
  await s.jobs.updateCurrentCommit(job.id, {
    review: { outcome: 'REQUEST_CHANGES', comments: 'more', agent_session_id: 'r1', reviewed_at: T },
  });
  await s.jobs.appendCommit(job.id, { commit_id: `c2-${title}`, created_at: T } as never);
  await s.asks.open(job.id, ASK);
  return { todo, job };
}

describe.skipIf(postgresDriver.skip)(
  `the board's one read on PostgreSQL${postgresDriver.skip ? ` (skipped: ${postgresDriver.skip})` : ''}`,
  () => {
    let f: DriverFixture;
    let s: AsyncStateStore;
    beforeEach(async () => {
      f = await postgresDriver.make();
      s = await f.connect();
    });
    afterEach(async () => {
      await f?.cleanup();
    });

    /** What the store's own reads give for the same question. */
    async function inSteps(repo: string | null, after: number, whole: boolean) {
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

    it('answers as the store does, step by step, for a repository and for all, whole and after a version', async () => {
      const a = await busyJob(s, 'r', 'a');
      await busyJob(s, 'other', 'o');
      await s.runners.register({ repo: 'r', pid: 9, host: 'h1', slots: 2, watch: true });
      const mid = await s.jobs.version();
      // a's todo is not written again (only its job): not read after mid.
      const b = await busyJob(s, 'r', 'b');
      await s.jobs.setStage(a.job.id, 'testing');
      const late = await s.todos.create('r', { title: 'not started' });
      if (!s.readBoard) throw new Error('the PostgreSQL store reads a board in one round trip');

      const whole = await s.readBoard('r', -1, true);
      expect(whole.version).toBe(await s.jobs.version());
      const expected = await inSteps('r', -1, true);
      // Newest first, as the store lists them; each whole (children included).
      expect(whole.jobs).toEqual(expected.jobs);
      expect(whole.jobs.map((j) => j.todo_id)).toEqual([b.todo.id, a.todo.id]);
      expect(whole.jobs[0]!.changes[0]!.commits.map((c) => [c.commit_id, c.review?.outcome ?? null])).toEqual(
        [
          ['c-b', 'REQUEST_CHANGES'],
          ['c2-b', null],
        ],
      );
      expect(whole.jobs[0]!.asking?.title).toBe('Run npm test');
      expect(whole.todos).toEqual(await s.todos.list('r'));
      expect(byId(whole.briefs!)).toEqual(byId(expected.briefs!));
      expect(whole.runners).toEqual(expected.runners);
      expect(whole.runners).toHaveLength(1);

      const since = await s.readBoard('r', mid, false);
      const expectedSince = await inSteps('r', mid, false);
      expect(since.jobs).toEqual(expectedSince.jobs);
      expect(byId(since.jobs).map((j) => j.id)).toEqual(byId([a.job, b.job]).map((j) => j.id));
      expect(byId(since.todos).map((t) => t.id)).toEqual(byId([b.todo, late]).map((t) => t.id));
      expect(byId(since.todos)).toEqual(byId(await s.todos.listChangedAfter('r', mid)));
      expect(byId(since.briefs!)).toEqual(byId(expectedSince.briefs!));

      // Every repository: every job, the todos of the jobs read, and no briefs or runners.
      const all = await s.readBoard(null, -1, true);
      expect(all.jobs).toEqual((await inSteps(null, -1, true)).jobs);
      expect(all.jobs).toHaveLength(3);
      expect(all.todos.map((t) => t.title).sort()).toEqual(['a', 'b', 'o']);
      expect([all.briefs, all.runners]).toEqual([null, null]);

      // Nothing written since: no job, no todo, no brief; the runners still.
      const now = await s.readBoard('r', whole.version, false);
      expect([now.version, now.jobs, now.todos, now.briefs]).toEqual([whole.version, [], [], []]);
      expect(now.runners).toHaveLength(1);
    });

    it("is the board's copy's one read per refresh", async () => {
      const board = await f.connect();
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
