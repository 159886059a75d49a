// A job's intent to land (model/job.ts to_land): recorded with the claim of a
// landing runner's job, kept through a refused landing, gone once it lands or
// ends with nothing to land; the landing taken in one transaction, so two
// processes never land one job; and what a landing runner makes of each job
// to land (src/land/merge-queue.ts toLand).
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimRefusal } from '../../src/model/backlog.js';
import type { JobLanding } from '../../src/model/job.js';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { toLand } from '../../src/land/merge-queue.js';
import { migrate } from '../../src/state/sqlite/db.js';
import { jobDetail, jobListTable } from '../../src/cli/job/view.js';
import { style } from '../../src/cli/format.js';
import { landingLine } from '../../src/dashboard/view/board.js';
import { tempDir } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
beforeEach(() => {
  tmp = tempDir();
  store = openStateStore({ dir: join(tmp.path, 'incrementum') });
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

const ready =
  (id: string) => (todos: Parameters<typeof claimRefusal>[1], jobs: Parameters<typeof claimRefusal>[2]) =>
    claimRefusal(id, todos, jobs, { mode: 'ready', maxAttempts: 2 });

/** A job of a landing runner, claimed for a new todo, with one commit; completed unless told. */
function landingRunJob(title: string, o: { complete?: boolean; commit?: boolean; pid?: number } = {}) {
  const t = store.todos.create('r', { title });
  const job = store.jobs.claim(
    'r',
    { todo_id: t.id, to_land: true, pid: o.pid ?? 999_999, host: 'here' },
    ready(t.id),
  );
  if (o.commit !== false) {
    store.jobs.appendChange(job.id, `I${title}`);
    store.jobs.appendCommit(job.id, { commit_id: `c-${title}` });
  }
  if (o.complete !== false) store.jobs.finish(job.id, 'completed');
  // The next job completes a millisecond later at least: two completions in
  // the same millisecond go by job id, which is random, and the order checked
  // below is the completions'.
  for (const at = Date.now(); Date.now() === at;);
  return store.jobs.get(job.id)!;
}

const landing = (state: JobLanding['state'], pid: number, host = 'here'): JobLanding => ({
  state,
  onto: 'main',
  step: state === 'refused' ? 'the tests fail' : 'testing',
  at: new Date().toISOString(),
  pid,
  host,
});

/** A probe of host "here" where only `alive` pids run. */
const probe = (...alive: number[]) => ({ host: 'here', pidAlive: (pid: number) => alive.includes(pid) });

describe('to_land', () => {
  it('is recorded with the claim and kept while the job runs and once it completed with commits', () => {
    const running = landingRunJob('running', { complete: false });
    expect(running.to_land).toBe(true);
    const done = landingRunJob('done');
    expect(done).toMatchObject({ status: 'completed', to_land: true, landed: null });
    // A job a person started is not to land.
    const t = store.todos.create('r', { title: 'by hand' });
    expect(store.jobs.claim('r', { todo_id: t.id }, ready(t.id)).to_land).toBe(false);
    expect(store.jobs.toLand('r').map((j) => j.id)).toEqual([done.id]);
  });

  it('goes when the job lands, fails, or completes with nothing to land; a refusal keeps it', () => {
    const landed = landingRunJob('landed');
    store.jobs.setLanded(landed.id, {
      onto: 'main',
      commit: 'x',
      at: new Date().toISOString(),
      tested: true,
    });
    expect(store.jobs.get(landed.id)!.to_land).toBe(false);
    const failed = landingRunJob('failed', { complete: false });
    store.jobs.finish(failed.id, 'failed', 'boom');
    expect(store.jobs.get(failed.id)!.to_land).toBe(false);
    const empty = landingRunJob('empty', { commit: false });
    expect(store.jobs.get(empty.id)).toMatchObject({ status: 'completed', to_land: false });
    const refused = landingRunJob('refused');
    store.jobs.setLanding(refused.id, landing('refused', 1));
    expect(store.jobs.get(refused.id)!.to_land).toBe(true);
    expect(store.jobs.toLand('r').map((j) => j.id)).toEqual([refused.id]);
  });

  it('a store made by schema 14 opens with its jobs not to land, their listing texts rebuilt with the key', () => {
    const dir = join(tmp.path, 'old');
    mkdirSync(dir, { recursive: true });
    const raw = new DatabaseSync(join(dir, 'state.db'));
    migrate(raw, 0, 14);
    const T = '2026-01-01T00:00:00.000Z';
    raw
      .prepare(
        `INSERT INTO jobs (id, repo, todo_id, stage, status, started_at, updated_at, list_json)
         VALUES ('j1','r','t1','implementing','completed',?,?,'{"stale":"text"}')`,
      )
      .run(T, T);
    raw.close();
    const s = openStateStore({ dir });
    try {
      expect(s.jobs.get('j1')).toMatchObject({ status: 'completed', to_land: false });
      expect(JSON.parse(s.jobs.listJson('r'))).toEqual([JSON.parse(JSON.stringify(s.jobs.get('j1')))]);
      expect(s.jobs.toLand('r')).toEqual([]);
    } finally {
      s.close();
    }
  });
});

describe('takeLanding', () => {
  it('takes a job no live process lands, refuses a landed one and one a live process lands', () => {
    const job = landingRunJob('a');
    const mine = landing('landing', 10);
    expect(store.jobs.takeLanding(job.id, mine, () => false)).toEqual({ ok: true });
    expect(store.jobs.get(job.id)!.landing).toEqual(mine);
    // Another process, while the first lands it.
    const other = landing('landing', 11);
    expect(store.jobs.takeLanding(job.id, other, (l) => l.pid === 10)).toEqual({
      ok: false,
      landed: false,
      by: mine,
    });
    // The first was killed: the next takes it over.
    expect(store.jobs.takeLanding(job.id, other, () => false)).toEqual({ ok: true });
    store.jobs.setLanded(job.id, { onto: 'main', commit: 'x', at: new Date().toISOString(), tested: true });
    expect(store.jobs.takeLanding(job.id, landing('landing', 12), () => false)).toEqual({
      ok: false,
      landed: true,
      by: null,
    });
  });
});

describe('toLand (what a landing runner does with each job to land)', () => {
  it('ready oldest completion first; refused, landed elsewhere and still finishing apart', async () => {
    const first = landingRunJob('first');
    const second = landingRunJob('second');
    const refused = landingRunJob('refused');
    store.jobs.setLanding(refused.id, landing('refused', 1));
    const elsewhere = landingRunJob('elsewhere');
    store.jobs.setLanding(elsewhere.id, landing('landing', 4242));
    const remote = landingRunJob('remote');
    store.jobs.setLanding(remote.id, landing('landing', 4243, 'other-host'));
    const killedMidLanding = landingRunJob('killed');
    store.jobs.setLanding(killedMidLanding.id, landing('landing', 4244));
    const finishing = landingRunJob('finishing', { pid: 5150 });
    const t = await toLand(asyncStore(store), 'r', probe(4242, 5150));
    // Long after it completed, a live pid is another process's (pids are reused): not waited on.
    const later = await toLand(asyncStore(store), 'r', probe(4242, 5150), Date.now() + 10 * 60_000);
    expect(later.finishing).toEqual([]);
    expect(later.ready.map((j) => j.id)).toContain(finishing.id);
    const ids = (jobs: { id: string }[]) => jobs.map((j) => j.id);
    expect(ids(t.ready)).toEqual([first.id, second.id, killedMidLanding.id]);
    expect(ids(t.refused)).toEqual([refused.id]);
    expect(ids(t.elsewhere).sort()).toEqual([elsewhere.id, remote.id].sort());
    expect(ids(t.finishing)).toEqual([finishing.id]);
  });
});

describe('what shows a job to land', () => {
  it('ii job list, ii job show and the board card say "to land"; refused, they say so and that no run retries it', () => {
    const job = landingRunJob('show me');
    const todos = new Map(store.todos.list('r').map((t) => [t.id, t]));
    const plain = style(false);
    expect(jobListTable([job], todos, plain)).toContain('to land');
    expect(jobDetail(job, todos.get(job.todo_id)!, plain)).toContain(
      'not yet: to land (started by ii run --land); the next ii run --land lands it',
    );
    expect(landingLine(job)).toBe('to land');
    store.jobs.setLanding(job.id, landing('refused', 1));
    const refused = store.jobs.get(job.id)!;
    expect(jobListTable([refused], todos, plain)).toContain('to land (refused)');
    expect(jobDetail(refused, todos.get(job.todo_id)!, plain)).toContain('no landing runner tries it again');
    expect(landingLine(refused)).toBe('not landed: the tests fail');
    // A landing whose process is gone (killed mid-way) says the next landing run takes it over.
    store.jobs.setLanding(job.id, landing('landing', 999_998, hostname()));
    expect(jobDetail(store.jobs.get(job.id)!, null, plain)).toContain(
      'its process is gone: the next ii run --land lands it',
    );
    // A person's job, completed: none of it.
    const t = store.todos.create('r', { title: 'by hand' });
    const mine = store.jobs.claim('r', { todo_id: t.id }, ready(t.id));
    store.jobs.finish(mine.id, 'completed');
    expect(landingLine(store.jobs.get(mine.id)!)).toBeNull();
  });
});

describe('a new job of the todo', () => {
  it('supersedes an older one still to land (a retry): only the new one may land', () => {
    const old = landingRunJob('retried');
    store.jobs.setLanding(old.id, landing('refused', 1));
    // ii job retry claims the todo by hand.
    const retry = store.jobs.claim('r', { todo_id: old.todo_id }, () => null);
    expect(store.jobs.get(old.id)).toMatchObject({ to_land: false, landed: null, status: 'completed' });
    expect(retry.to_land).toBe(false);
    expect(store.jobs.toLand('r')).toEqual([]);
    // Its listing text followed.
    const listed = JSON.parse(store.jobs.listJson('r')) as { id: string; to_land: boolean }[];
    expect(listed.find((j) => j.id === old.id)!.to_land).toBe(false);
  });
});
