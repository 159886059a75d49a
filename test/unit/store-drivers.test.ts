// The both-driver store suite: the asynchronous store API (state/async-api.ts)
// run against SQLite (through the sync adapter) and against PostgreSQL (a
// fresh database of the run's private server for each test). Each rule a
// store keeps is asserted the same way on both; the concurrent cases use two
// or more connections, as two processes or two machines would.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BacklogCopy } from '../../src/backlog/backlog-copy.js';
import { claimRefusal } from '../../src/model/backlog.js';
import type { Job } from '../../src/model/job.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { shownJsonText } from '../../src/text/json.js';
import { DRIVERS, postgresDriver, sqliteDriver, type DriverFixture } from '../helpers/store-drivers.js';
import { waitFor } from '../helpers/tmp.js';
import { ASK } from '../helpers/permission-ask.js';

const readyCheck =
  (id: string) => (todos: Parameters<typeof claimRefusal>[1], jobs: Parameters<typeof claimRefusal>[2]) =>
    claimRefusal(id, todos, jobs, { mode: 'ready', maxAttempts: 2 });

const T = '2026-11-22T00:00:00.000Z';

/** Sorted by id: two reads of the same rows compare equal whatever order each gives them in. */
const byId = <R extends { id: string }>(rows: readonly R[]): R[] =>
  [...rows].sort((x, y) => x.id.localeCompare(y.id));
const SECRET = `sk-ant-api03-${'S'.repeat(40)}`;

/** One job's whole life through the API; what it gives back, with ids and times made comparable. */
async function jobLife(s: AsyncStateStore): Promise<unknown> {
  const dep = await s.todos.create('r', { title: 'dep', type: 'bug', priority: 1 });
  const todo = await s.todos.create('r', { title: 'Add a flag', description: 'd', deps: [dep.id] });
  await s.todos.setStatus('r', dep.id, 'done');
  const job = await s.jobs.claim(
    'r',
    { todo_id: todo.id, pid: 7, host: 'h1', to_land: true },
    readyCheck(todo.id),
  );
  await s.jobs.setSession(job.id, 'sess1', '/ws/1', 'base0');
  await s.jobs.setBaseBranch(job.id, 'main');
  await s.jobs.addAgentSession(job.id, {
    purpose: 'implement',
    id: 'a1',
    transcript: '/t/a1.jsonl',
    started_at: T,
  });
  await s.jobs.appendChange(job.id, 'ch1');
  await s.jobs.appendCommit(job.id, {
    commit_id: 'c1',
    draft_message: 'first',
    files: [{ path: 'a.ts', status: 'modified', additions: 1, deletions: 0, abs_path: '/ws/1/a.ts' }],
    created_at: T,
  } as never);
  await s.jobs.updateCurrentCommit(job.id, {
    tests_passed: true,
    test_results: [{ command: 'npm test', exit_code: 0, output_excerpt: 'ok', duration_ms: 5 }] as never,
    review: { outcome: 'ACCEPT', comments: 'fine', agent_session_id: 'r1', reviewed_at: T },
    diff_summary: '1 file',
  });
  await s.jobs.appendCommit(job.id, { commit_id: 'c2', created_at: T });
  await s.jobs.recordAgentUsage(job.id, 'a1', { input_tokens: 10, output_tokens: 5, cost: 0.0117 });
  await s.jobs.addUsage(job.id, { input_tokens: 1, output_tokens: 1, cost: 0.0117 });
  await s.jobs.setStage(job.id, 'reviewing');
  await s.jobs.setFeedback(job.id, 'more tests');
  await s.jobs.setProjectReview(job.id, {
    outcome: 'ACCEPT',
    comments: 'ok',
    agent_session_id: null,
    reviewed_at: T,
  });
  await s.jobs.heartbeat(job.id, 7, 'h1', 12345);
  expect(await s.jobs.runnerStart(job.id)).toBe(12345);
  const done = await s.jobs.finish(job.id, 'completed');
  expect(done.to_land).toBe(true);
  expect(await s.jobs.toLand('r')).toHaveLength(1);
  const landed = await s.jobs.setLanded(job.id, { branch: 'main', commit: 'abc', landed_at: T } as never);
  const briefs = await s.jobs.briefs('r');
  const listJson = await s.jobs.listJson('r');
  expect(listJson).toBe(JSON.stringify(await s.jobs.list('r')));
  // Ids and times differ from run to run; the rest must be the same on both drivers.
  const norm = (v: unknown): unknown =>
    JSON.parse(
      JSON.stringify(v)
        .replaceAll(job.id, 'JOB')
        .replaceAll(todo.id, 'TODO')
        .replaceAll(dep.id, 'DEP')
        .replace(/"(id)":"[0-9a-f]{12}"/g, '"$1":"ITER"')
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, 'TIME'),
    );
  return norm({ landed, briefs, todos: await s.todos.list('r'), jobs: JSON.parse(listJson) as Job[] });
}

describe('the two drivers', () => {
  it.skipIf(postgresDriver.skip !== null)(
    'give the same job, todos, briefs and listing for one job life',
    async () => {
      const out: unknown[] = [];
      for (const d of [sqliteDriver, postgresDriver]) {
        const f = await d.make();
        try {
          out.push(await jobLife(await f.connect()));
        } finally {
          await f.cleanup();
        }
      }
      expect(out[1]).toEqual(out[0]);
      // The cost adds in whole micro-dollars on both: 0.0117 + 0.0117 is 0.0234.
      expect(JSON.stringify(out[1])).toContain('"cost":0.0234');
    },
  );
});

describe.each(DRIVERS)('store on $name', (driver) => {
  let f: DriverFixture;
  let s: AsyncStateStore;
  beforeEach(async (ctx) => {
    if (driver.skip) {
      ctx.skip(driver.skip);
      return;
    }
    f = await driver.make();
    s = await f.connect();
  });
  afterEach(async () => {
    await f?.cleanup();
  });

  it('todos: defaults, order, prefixes, edits refusing unknown deps and cycles', async () => {
    expect(s.driver).toBe(driver.name);
    const a = await s.todos.create('r', { title: '  A  ' });
    const b = await s.todos.create('r', { title: 'B', priority: 0, deps: [a.id.slice(0, 6)] });
    expect(a).toMatchObject({ title: 'A', type: 'task', priority: 2, status: 'open', deps: [] });
    expect(b.deps).toEqual([a.id]);
    expect((await s.todos.list('r')).map((t) => t.id)).toEqual([b.id, a.id]);
    expect(await s.todos.list('other')).toEqual([]);
    expect((await s.todos.resolve('r', b.id.slice(0, 5))).id).toBe(b.id);
    await expect(s.todos.resolve('r', 'zzzz')).rejects.toThrow(/no todo matches "zzzz"/);
    await expect(s.todos.create('r', { title: ' ' })).rejects.toThrow(/needs a title/);
    await expect(s.todos.update('r', a.id, { deps: [b.id] })).rejects.toThrow(
      `cannot depend on ${b.id}: that would make a cycle, ${a.id} → ${b.id} → ${a.id}`,
    );
    await expect(s.todos.update('r', a.id, { deps: ['zzzz'] })).rejects.toThrow(
      /dep "zzzz": no todo matches/,
    );
    const e = await s.todos.update('r', a.id, { title: 'A2', priority: 4 });
    expect(e).toMatchObject({ id: a.id, title: 'A2', priority: 4, deps: [] });
    expect((await s.todos.list('r', { status: 'open' })).length).toBe(2);
  });

  it('todos: the board reads only what changed after the version it saw', async () => {
    const a = await s.todos.create('r', { title: 'A' });
    const stamp = await s.todos.stamp('r');
    const v = await s.jobs.version();
    expect(await s.todos.listChangedAfter('r', v)).toEqual([]);
    const b = await s.todos.create('r', { title: 'B' });
    await s.todos.setStatus('r', a.id, 'done');
    expect((await s.todos.listChangedAfter('r', v)).map((t) => t.id).sort()).toEqual([a.id, b.id].sort());
    expect(await s.todos.stamp('r')).not.toBe(stamp);
    expect(await s.jobs.version()).toBeGreaterThan(v);
  });

  it('claim: the job and the todo in progress at once; refused again, and refused to close or reopen while held', async () => {
    const a = await s.todos.create('r', { title: 'A' });
    const j = await s.jobs.claim('r', { todo_id: a.id, pid: 1, host: 'h' }, readyCheck(a.id));
    expect(j).toMatchObject({ todo_id: a.id, status: 'active', stage: 'implementing', pid: 1, host: 'h' });
    expect((await s.todos.get('r', a.id))?.status).toBe('in_progress');
    await expect(s.jobs.claim('r', { todo_id: a.id }, readyCheck(a.id))).rejects.toThrow(
      /already has a job, /,
    );
    await expect(s.todos.close('r', a.id)).rejects.toThrow(`job ${j.id} is working on it`);
    await expect(s.todos.reopen('r', a.id)).rejects.toThrow(/is working on it/);
    expect((await s.todos.close('r', a.id, { whileHeld: true })).status).toBe('closed');
    // The job's session start, after that close, leaves it closed.
    expect((await s.todos.setStatus('r', a.id, 'in_progress', { unlessClosed: true })).status).toBe('closed');
    expect((await s.todos.get('r', a.id))?.status).toBe('closed');
    await expect(s.todos.setStatus('r', 'zzzz', 'in_progress', { unlessClosed: true })).rejects.toThrow(
      /no todo zzzz/,
    );
    expect(await s.jobs.list('r')).toHaveLength(1);
    await s.jobs.finish(j.id, 'abandoned', 'stopped');
    expect((await s.todos.reopen('r', a.id)).status).toBe('open');
  });

  it('claim: a dep not done refuses; the check sees the todo, its deps and their jobs only', async () => {
    const dep = await s.todos.create('r', { title: 'dep' });
    const t = await s.todos.create('r', { title: 'T', deps: [dep.id] });
    const other = await s.todos.create('r', { title: 'other' });
    await s.jobs.claim('r', { todo_id: other.id }, readyCheck(other.id));
    const seen: string[][] = [];
    const check: typeof readyCheck extends (id: string) => infer C ? C : never = (todos, jobs) => {
      seen.push([...todos.map((x) => x.id).sort(), ...jobs.map((j) => `job of ${j.todo_id}`)]);
      return readyCheck(t.id)(todos, jobs);
    };
    await expect(s.jobs.claim('r', { todo_id: t.id }, check)).rejects.toThrow(
      `todo ${t.id} is not ready: waits for ${dep.id} "dep" (open)`,
    );
    expect(seen[0]).toEqual([dep.id, t.id].sort());
    await s.todos.setStatus('r', dep.id, 'done');
    expect((await s.jobs.claim('r', { todo_id: t.id }, check)).todo_id).toBe(t.id);
  });

  it('two claimers on two connections, at once, never get the same todo; every todo is claimed once', async () => {
    const others = [await f.connect(), await f.connect(), await f.connect()];
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) ids.push((await s.todos.create('r', { title: `t${i}` })).id);
    const won: string[] = [];
    // Each connection walks the backlog as a runner does: claim the next
    // todo; when refused (taken, being taken), go on to the next one.
    await Promise.all(
      [s, ...others].map(async (c, k) => {
        const order = k % 2 === 0 ? ids : [...ids].reverse();
        for (const id of order)
          try {
            won.push(
              (await c.jobs.claim('r', { todo_id: id, pid: 100 + k, host: `m${k}` }, readyCheck(id))).todo_id,
            );
          } catch (err) {
            expect((err as Error).message).toMatch(
              /not open|already has a job|being claimed by another runner/,
            );
          }
      }),
    );
    expect(won.sort()).toEqual([...ids].sort());
    const jobs = await s.jobs.list('r');
    expect(jobs).toHaveLength(ids.length);
    expect(new Set(jobs.map((j) => j.todo_id)).size).toBe(ids.length);
  });

  it('jobs: listChangedAfter gives the jobs written after a version, heartbeats included', async () => {
    const a = await s.todos.create('r', { title: 'A' });
    const b = await s.todos.create('r', { title: 'B' });
    const ja = await s.jobs.claim('r', { todo_id: a.id }, readyCheck(a.id));
    const jb = await s.jobs.claim('r', { todo_id: b.id }, readyCheck(b.id));
    const v = await s.jobs.version();
    expect(await s.jobs.listChangedAfter(v)).toEqual([]);
    await s.jobs.heartbeat(ja.id, 9, 'h9');
    expect((await s.jobs.listChangedAfter(v, 'r')).map((j) => j.id)).toEqual([ja.id]);
    expect((await s.jobs.listChangedAfter(v, 'elsewhere')).map((j) => j.id)).toEqual([]);
    await s.jobs.setStage(jb.id, 'testing');
    expect((await s.jobs.listChangedAfter(v)).map((j) => j.id).sort()).toEqual([ja.id, jb.id].sort());
    expect((await s.jobs.resolve('r', ja.id.slice(0, 6))).id).toBe(ja.id);
    expect((await s.jobs.list('r', { activeOnly: true })).length).toBe(2);
    expect((await s.jobs.listAll({ activeOnly: true })).length).toBe(2);
    expect((await s.jobs.get(ja.id))?.host).toBe('h9');
    // The active jobs' runners, as every listing asks for them first (cli/reap.ts): a finished job is not one.
    await s.jobs.finish(jb.id, 'failed', 'x');
    expect(await s.jobs.activeRunners('r')).toEqual([
      { id: ja.id, todo_id: a.id, status: 'active', pid: 9, host: 'h9' },
    ]);
  });

  it("backlog: ii run's copy of the briefs and todos, brought up to date from what changed, is the whole read after every write", async () => {
    const copy = new BacklogCopy(s, 'r');
    const whole = async () => ({
      briefs: byId(await s.jobs.briefs('r')),
      todos: byId(await s.todos.list('r')),
    });
    const check = async () => {
      const got = await copy.read();
      expect({ briefs: byId(got.briefs), todos: byId(got.todos) }).toEqual(await whole());
      // In the store's order: priority, then age.
      const order = got.todos.map((t) => [t.priority, t.created_at] as const);
      expect(order).toEqual([...order].sort((x, y) => x[0] - y[0] || x[1].localeCompare(y[1])));
      return got;
    };
    const a = await s.todos.create('r', { title: 'A' });
    await s.todos.create('elsewhere', { title: 'not this repository' });
    await check();
    const b = await s.todos.create('r', { title: 'B', priority: 0 });
    await check();
    const ja = await s.jobs.claim('r', { todo_id: a.id, pid: 3, host: 'h' }, readyCheck(a.id));
    await check();
    // A job that is not written again: never in what changed.
    const c = await s.todos.create('r', { title: 'C', priority: 4 });
    await s.jobs.claim('r', { todo_id: c.id, pid: 5, host: 'h' }, readyCheck(c.id));
    await check();
    const v = await s.jobs.version();
    // Nothing written since: the same read, from one question (the version).
    expect(await copy.read()).toBe(await copy.read());
    await s.jobs.setStage(ja.id, 'testing');
    expect((await s.jobs.briefsChangedAfter('r', v)).map((j) => j.id)).toEqual([ja.id]);
    expect(await s.jobs.briefsChangedAfter('elsewhere', v)).toEqual([]);
    await check();
    await s.jobs.appendChange(ja.id, 'ch1');
    await s.jobs.appendCommit(ja.id, { commit_id: 'c1', draft_message: 'first' });
    // The derived fields move with the job's commits: its iteration, committed.
    expect((await check()).briefs.find((j) => j.id === ja.id)).toMatchObject({
      iteration: 1,
      committed: true,
    });
    await s.jobs.heartbeat(ja.id, 4, 'h2');
    await check();
    await s.jobs.finish(ja.id, 'completed');
    expect((await check()).briefs.find((j) => j.id === ja.id)).toMatchObject({ unlanded: true });
    await s.jobs.setLanded(ja.id, { branch: 'main', commit: 'abc', landed_at: T } as never);
    expect((await check()).briefs.find((j) => j.id === ja.id)).toMatchObject({ unlanded: false });
    await s.todos.update('r', b.id, { priority: 3 });
    await s.todos.setStatus('r', a.id, 'done');
    await check();
    const jb = await s.jobs.claim('r', { todo_id: b.id }, readyCheck(b.id));
    await s.jobs.finish(jb.id, 'failed', 'x');
    await check();
  });

  it("backlog: ii run's copy is read whole again when the store's version went back (a store put back from an older copy)", async () => {
    // The store ii run reads is swapped under it for one with fewer writes,
    // as a state dir restored from a backup would be.
    const g = await driver.make();
    try {
      const older = await g.connect();
      const kept = await older.todos.create('r', { title: 'in the older copy' });
      let current: AsyncStateStore = s;
      const swapped = new BacklogCopy(
        {
          get jobs() {
            return current.jobs;
          },
          get todos() {
            return current.todos;
          },
        } as AsyncStateStore,
        'r',
      );
      for (let i = 0; i < 4; i++) {
        const t = await s.todos.create('r', { title: `newer ${i}` });
        await s.jobs.claim('r', { todo_id: t.id, pid: 1, host: 'h' }, readyCheck(t.id));
      }
      expect((await swapped.read()).todos).toHaveLength(4);
      expect(await older.jobs.version()).toBeLessThan(await s.jobs.version());
      current = older;
      const got = await swapped.read();
      expect(got.todos.map((t) => t.id)).toEqual([kept.id]);
      expect(got.briefs).toEqual([]);
      // Read from what changed again from there on.
      const next = await older.todos.create('r', { title: 'after the swap' });
      expect((await swapped.read()).todos.map((t) => t.id)).toEqual([kept.id, next.id]);
    } finally {
      await g.cleanup();
    }
  });

  it("jobs: listShown is listJson as ii job list --json prints it, an agent's secret redacted", async () => {
    const a = await s.todos.create('r', { title: 'A' });
    const b = await s.todos.create('r', { title: 'B' });
    const clean = await s.jobs.claim('r', { todo_id: a.id, pid: 5, host: 'h' }, readyCheck(a.id));
    const dirty = await s.jobs.claim('r', { todo_id: b.id, pid: 6, host: 'h' }, readyCheck(b.id));
    await s.jobs.appendChange(clean.id, 'ch1');
    await s.jobs.appendCommit(clean.id, { commit_id: 'c1', draft_message: 'feat: fine' });
    await s.jobs.appendChange(dirty.id, 'ch2');
    await s.jobs.appendCommit(dirty.id, { commit_id: 'c2', draft_message: `feat: ${SECRET} \u009b` });
    const text = Buffer.from(await s.jobs.listShown('r')).toString('utf8');
    expect(text).toBe(shownJsonText(await s.jobs.listJson('r')));
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('\u009b');
    expect(text).toContain('feat: [REDACTED] \\u009b');
    expect(Buffer.from(await s.jobs.listShown('nobody')).toString()).toBe('[]');
  });

  it('jobs: one landing at a time; an orphan is finished only as it was judged', async () => {
    const a = await s.todos.create('r', { title: 'A' });
    const j = await s.jobs.claim('r', { todo_id: a.id, pid: 5, host: 'h' }, readyCheck(a.id));
    const other = await f.connect();
    const landing = { state: 'landing', pid: 1, host: 'h', started_at: T } as never;
    const [x, y] = await Promise.all([
      s.jobs.takeLanding(j.id, landing, () => true),
      other.jobs.takeLanding(j.id, landing, () => true),
    ]);
    expect([x.ok, y.ok].sort()).toEqual([false, true]);
    expect(await s.jobs.finishOrphan(j.id, { pid: 6, host: 'h' }, 'failed', 'gone')).toBeNull();
    const [p, q] = await Promise.all([
      s.jobs.finishOrphan(j.id, { pid: 5, host: 'h' }, 'failed', 'runner gone'),
      other.jobs.finishOrphan(j.id, { pid: 5, host: 'h' }, 'failed', 'runner gone'),
    ]);
    expect([p, q].filter((r) => r !== null)).toHaveLength(1);
    expect((await s.jobs.get(j.id))?.failure_reason).toBe('runner gone');
    await s.jobs.resume(j.id, 8, 'h2', 'sess2');
    expect(await s.jobs.get(j.id)).toMatchObject({
      status: 'active',
      pid: 8,
      host: 'h2',
      session_id: 'sess2',
    });
  });

  it('control requests: pending oldest first until handled, seen from another connection', async () => {
    const other = await f.connect();
    const r1 = await s.control.request('j1', 'abandon', 'stop it');
    const r2 = await s.control.request('j1', 'abandon');
    expect(r1).toMatchObject({ job_id: 'j1', kind: 'abandon', reason: 'stop it', handled_at: null });
    expect(typeof r1.id).toBe('number');
    expect((await other.control.pending('j1')).map((r) => r.id)).toEqual([r1.id, r2.id]);
    await other.control.markHandled(r1.id);
    expect((await s.control.pending('j1')).map((r) => r.id)).toEqual([r2.id]);
    expect(await s.control.pending('j2')).toEqual([]);
  });

  it('permission requests: an open one is its job asking, in the listing too; an answer closes it once and adds its wait; the job ending cancels one left open', async () => {
    const other = await f.connect();
    const a = await s.todos.create('r', { title: 'A' });
    const j = await s.jobs.claim('r', { todo_id: a.id, pid: 5, host: 'h' }, readyCheck(a.id));
    await expect(s.asks.open('nojob', ASK)).rejects.toThrow(/no job nojob/);
    expect(await s.asks.list('nojob')).toEqual([]);
    const v = await s.jobs.version();
    const ask = await s.asks.open(j.id, ASK);
    expect(ask).toMatchObject({ ...ASK, job_id: j.id, outcome: null, answered_at: null, waited_ms: null });
    expect(typeof ask.id).toBe('number');
    expect((await other.jobs.listChangedAfter(v)).map((x) => x.asking)).toEqual([ask]);
    expect(await other.asks.openFor(j.id)).toEqual(ask);
    expect((await other.jobs.get(j.id))?.asking).toEqual(ask);
    expect(await s.jobs.listJson('r')).toBe(JSON.stringify(await s.jobs.list('r')));
    expect(await s.jobs.listJson('r')).toContain('"title":"Run npm test"');
    await waitFor(() => Date.now() - Date.parse(ask.asked_at) >= 5, 'the request to have waited 5 ms');
    const closed = await other.asks.close(ask.id, 'reject', 'not now');
    expect(closed).toMatchObject({ id: ask.id, outcome: 'reject', note: 'not now' });
    expect(closed!.waited_ms).toBeGreaterThanOrEqual(5);
    expect(await s.asks.close(ask.id, 'timeout')).toBeNull();
    expect(await s.asks.get(ask.id)).toEqual(closed);
    expect(await s.asks.openFor(j.id)).toBeNull();
    const after = (await s.jobs.get(j.id))!;
    expect(after.asking).toBeNull();
    expect(after.waited_ms).toBe(closed!.waited_ms);
    expect(await s.jobs.listJson('r')).toBe(JSON.stringify(await s.jobs.list('r')));

    const left = await s.asks.open(j.id, { ...ASK, command: null, tool_kind: 'edit', paths: ['a.ts'] });
    await waitFor(() => Date.now() - Date.parse(left.asked_at) >= 5, 'the request to have waited 5 ms');
    const ended = await s.jobs.finishOrphan(j.id, { pid: 5, host: 'h' }, 'failed', 'runner gone');
    const cancelled = (await s.asks.get(left.id))!;
    expect(cancelled).toMatchObject({ outcome: 'cancelled', paths: ['a.ts'] });
    expect(cancelled.waited_ms).toBeGreaterThanOrEqual(5);
    expect(ended?.asking).toBeNull();
    expect(ended?.waited_ms).toBe(closed!.waited_ms! + cancelled.waited_ms!);
    expect((await s.asks.list(j.id)).map((x) => x.id)).toEqual([ask.id, left.id]);
  });

  it('permission requests: two closers at once on two connections, or a closer and the job ending: the first ending wins, its wait added once', async () => {
    const other = await f.connect();
    const a = await s.todos.create('r', { title: 'A' });
    const j = await s.jobs.claim('r', { todo_id: a.id }, readyCheck(a.id));
    let total = 0;
    for (let round = 0; round < 5; round++) {
      const ask = await s.asks.open(j.id, ASK);
      expect((await s.jobs.get(j.id))?.asking?.id).toBe(ask.id);
      await waitFor(() => Date.now() - Date.parse(ask.asked_at) >= 5, 'the request to have waited 5 ms');
      const ends = await Promise.all([
        s.asks.close(ask.id, 'allow'),
        other.asks.close(ask.id, 'timeout', 'too slow'),
      ]);
      const won = ends.filter((e) => e !== null);
      expect(won).toHaveLength(1);
      expect(await s.asks.get(ask.id)).toEqual(won[0]);
      total += won[0]!.waited_ms!;
      const job = (await other.jobs.get(j.id))!;
      expect(job.asking).toBeNull();
      expect(job.waited_ms).toBe(total);
    }
    const last = await s.asks.open(j.id, ASK);
    await waitFor(() => Date.now() - Date.parse(last.asked_at) >= 5, 'the request to have waited 5 ms');
    const [answer, done] = await Promise.all([
      other.asks.close(last.id, 'allow'),
      s.jobs.finish(j.id, 'abandoned', 'stop'),
    ]);
    const kept = (await s.asks.get(last.id))!;
    expect(kept.outcome).toBe(answer ? 'allow' : 'cancelled');
    if (answer) expect(kept).toEqual(answer);
    expect(kept.waited_ms).toBeGreaterThanOrEqual(5);
    expect(done.asking).toBeNull();
    expect((await s.jobs.get(j.id))?.waited_ms).toBe(total + kept.waited_ms!);
  });

  it('backlog runners: a todo another runner is starting is refused to the next, at once from two connections', async () => {
    const other = await f.connect();
    const a = await s.runners.register({
      repo: 'r',
      pid: 101,
      host: 'h',
      slots: 0,
      watch: true,
      lands: true,
    });
    const b = await other.runners.register({ repo: 'r', pid: 102, host: 'h', slots: 2, watch: false });
    expect(a).toMatchObject({ slots: 1, watch: true, lands: true, starting: [] });
    const takenBy = (id: string) => (others: { starting: string[] }[]) =>
      others.some((r) => r.starting.includes(id));
    const got = await Promise.all([
      s.runners.takeStart(a.id, 't1', takenBy('t1')),
      other.runners.takeStart(b.id, 't1', takenBy('t1')),
    ]);
    expect(got.filter(Boolean)).toHaveLength(1);
    await s.runners.setStarting(a.id, []);
    await other.runners.setStarting(b.id, []);
    expect(await other.runners.takeStart(b.id, 't2', takenBy('t2'))).toBe(true);
    expect((await s.runners.get(b.id))?.starting).toEqual(['t2']);
    // A todo a job has claimed since the caller looked is refused too, though
    // no runner lists it any more (its starter took it off once it saw the claim).
    const claimed = await s.todos.create('r', { title: 'C' });
    const open = await s.todos.create('r', { title: 'O' });
    await s.jobs.claim('r', { todo_id: claimed.id }, readyCheck(claimed.id));
    expect(await other.runners.takeStart(b.id, claimed.id, takenBy(claimed.id))).toBe(false);
    expect(await other.runners.takeStart(b.id, open.id, takenBy(open.id))).toBe(true);
    expect((await s.runners.get(b.id))?.starting).toEqual(['t2', open.id]);
    expect((await s.runners.setSlots(a.id, 4)).slots).toBe(4);
    await s.runners.heartbeat(a.id);
    await s.runners.remove(a.id);
    await expect(s.runners.setSlots(a.id, 2)).rejects.toThrow(/not running any more/);
    expect((await s.runners.list('r')).map((r) => r.id)).toEqual([b.id]);
  });

  it('workspaces: acquirers at once get distinct ones; a free one is reused; a number is never handed out twice', async () => {
    const conns = [s, await f.connect(), await f.connect()];
    const path = (n: number) => `/ws/${n}`;
    const branch = (n: number) => `ii/ws-${n}`;
    const got = await Promise.all(conns.map((c, i) => c.workspaces.acquire('r', `s${i}`, path, branch)));
    expect(new Set(got.map((g) => g.workspace.path)).size).toBe(3);
    expect(got.every((g) => g.created)).toBe(true);
    await s.workspaces.release('/ws/2', 's-not-holder');
    expect((await s.workspaces.list('r')).find((w) => w.path === '/ws/2')?.status).toBe('acquired');
    const holder = got.find((g) => g.workspace.path === '/ws/2')!.workspace.session_id!;
    await s.workspaces.release('/ws/2', holder);
    await s.workspaces.setBaseRev('/ws/2', 'abc');
    const again = await s.workspaces.acquire('r', 'sX', path, branch, (p) => p === '/ws/9');
    expect(again).toMatchObject({
      created: false,
      workspace: { path: '/ws/2', base_rev: 'abc', session_id: 'sX' },
    });
    expect(await s.workspaces.remove('/ws/3')).toBe(true);
    expect(await s.workspaces.removeIfFree('/ws/1')).toBe(false);
    const next = await s.workspaces.acquire('r', 'sY', path, branch);
    expect(next.workspace.path).toBe('/ws/4');
    expect((await s.workspaces.list()).map((w) => w.path)).toEqual(['/ws/1', '/ws/2', '/ws/4']);
  });

  it('sessions and process groups', async () => {
    const sess = await s.sessions.create('r', {
      todo_id: 't',
      workspace_path: '/ws/1',
      topic: 'x',
      id: 'sess-1',
    });
    expect(sess).toMatchObject({ id: 'sess-1', status: 'active', topic: 'x' });
    await expect(
      s.sessions.create('r', { todo_id: 't', workspace_path: '/w', id: 'sess-1' }),
    ).rejects.toThrow(/already exists/);
    expect((await s.sessions.setStatus('sess-1', 'done')).status).toBe('done');
    expect((await s.sessions.list('r')).map((x) => x.id)).toEqual(['sess-1']);
    await expect(s.sessions.setStatus('nope', 'done')).rejects.toThrow(/no session nope/);
    const g = await s.processGroups.record({
      job_id: 'j',
      workspace_path: '/ws/1',
      pgid: 42,
      start_ticks: 99,
      host: 'h',
      label: 'agent',
    });
    expect(g).toMatchObject({ pgid: 42, start_ticks: 99, label: 'agent' });
    expect((await s.processGroups.list({ workspace_path: '/ws/1' })).map((x) => x.id)).toEqual([g.id]);
    await s.processGroups.forget(g.id);
    expect(await s.processGroups.list({ job_id: 'j' })).toEqual([]);
  });
});
