// listJson (SQLite writes the JSON text) against list (Job objects), on jobs
// that use every field of the model, legacy rows included.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  AgentSessionRef,
  Job,
  JobChange,
  JobCommit,
  JobReview,
  type IterationSnapshot,
} from '../../src/model/index.js';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { COMMIT } from '../../src/state/sqlite/job-codec.js';
import { tempDir } from '../helpers/tmp.js';

const T = '2026-11-22T00:00:00.000Z';
/** Everything JSON.stringify escapes, and what it does not. */
const NASTY =
  'quote " backslash \\ slash / nl \n tab \t nul \u0000 esc \u001b del \u007f é 😀 \u2028 \u2029 \ufeff';

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

const review = (outcome: JobReview['outcome'], comments: string, agent: string | null): JobReview => ({
  outcome,
  comments,
  agent_session_id: agent,
  reviewed_at: T,
});
const snapshot = (stage: IterationSnapshot['stage']): IterationSnapshot => ({
  stage,
  status: 'active',
  files_created: ['a.ts'],
  files_modified: [],
  files_removed: ['gone.ts'],
  usage: { input_tokens: 5, output_tokens: 7, cost: 0.1 + 0.2 },
  artifact_count: 2,
  taken_at: T,
});

/** A repo whose jobs cover every field, status, optional key and legacy shape. */
function seed(repo: string): void {
  const s = store.jobs;
  // Legacy: no changes, no agent sessions, nothing but the defaults.
  s.create(repo, { todo_id: 'legacy' });

  const full = s.create(repo, {
    todo_id: 'full',
    session_id: 'sess',
    base_rev: 'abc123',
    workspace_path: '/ws/1',
    auto_commit: false,
    retried_from: 'older',
    pid: 4242,
    host: 'box',
  });
  s.setFeedback(full.id, NASTY);
  s.setStage(full.id, 'reviewing');
  s.addAgentSession(full.id, { purpose: 'implement', id: 'ag1', transcript: '/t/1.jsonl', started_at: T });
  s.addAgentSession(full.id, {
    purpose: 'review',
    id: 'ag2',
    transcript: '/t/2.jsonl',
    usage: { input_tokens: 1, output_tokens: 2, cost: 1 / 3 },
  });
  s.appendChange(full.id, 'Ione');
  s.appendCommit(full.id, {
    commit_id: 'c1',
    draft_message: `feat: ${NASTY}`,
    files: [
      {
        path: 'src/a.ts',
        abs_path: '/ws/src/a.ts',
        is_new: true,
        is_deleted: false,
        additions: 10,
        deletions: 0,
      },
    ],
    usage: { input_tokens: 100, output_tokens: 50, cost: 0.0123 },
    feedback: '| command | exit |',
    before: snapshot('implementing'),
    agent_session_id: 'ag1',
    created_at: T,
  });
  s.updateCurrentCommit(full.id, {
    iteration_commit_id: 'i1',
    tests_passed: false,
    test_results: [{ command: 'npm test', exit_code: 1, duration_ms: 12.5 }],
    after: snapshot('testing'),
    diff_summary: `Change 1, iteration 1; ${NASTY}`,
  });
  s.appendCommit(full.id, { commit_id: 'c2', review: review('REQUEST_CHANGES', NASTY, 'ag2') });
  s.updateCurrentCommit(full.id, { tests_passed: true });
  s.appendCommit(full.id, { commit_id: 'c3' }); // tests not run yet: null
  s.updateCurrentCommit(full.id, { review: review('ACCEPT', '', null) });
  s.appendChange(full.id, 'Itwo'); // a change with no commit yet
  s.setProjectReview(full.id, review('ACCEPT', 'fine', 'ag2'));
  s.addUsage(full.id, { input_tokens: 3, output_tokens: 4, cost: 0.1 });
  s.addUsage(full.id, { input_tokens: 0, output_tokens: 0, cost: 0.2 });
  s.heartbeat(full.id, 4343, 'other-box');
  s.setBaseBranch(full.id, `feat/${NASTY}`);
  s.setLanded(full.id, { onto: `feat/${NASTY}`, commit: 'c3', at: T, tested: false });
  // Landing clears a stopped conflict, so another job holds one.
  const held = s.create(repo, { todo_id: 'held' });
  s.finish(held.id, 'completed');
  s.setLandConflict(held.id, {
    onto: 'main',
    tip: 't1',
    files: [NASTY, 'b.txt'],
    worktree: `/w/${NASTY}`,
    at: T,
    test: true,
  });
  s.setLanding(held.id, { state: 'refused', onto: 'main', step: NASTY, at: T, pid: 12, host: null });
  // Started by ii run --land: one running, one completed and waiting to land.
  s.create(repo, { todo_id: 'landing-run', to_land: true });
  const toLand = s.create(repo, { todo_id: 'to-land', to_land: true });
  s.appendChange(toLand.id, 'Iland');
  s.appendCommit(toLand.id, { commit_id: 'l1' });
  s.finish(toLand.id, 'completed');
  // Waiting for a person: an open permission request after a closed one (waited_ms > 0 or 0).
  const asking = s.create(repo, { todo_id: 'asking' });
  const first = store.asks.open(asking.id, {
    tool_kind: null,
    title: NASTY,
    command: null,
    paths: [],
    diff_preview: null,
    options: [],
  });
  // A wait of at least a millisecond (waited_ms 0 would be the default).
  const t0 = Date.now();
  while (Date.now() < t0 + 2);
  store.asks.close(first.id, 'reject', NASTY);
  store.asks.open(asking.id, {
    tool_kind: 'execute',
    title: NASTY,
    command: `rm -rf ${NASTY}`,
    paths: [NASTY, '/b'],
    diff_preview: NASTY,
    options: [{ id: 'o1', name: NASTY, kind: 'allow_once' }],
  });

  // Costs SQLite would print differently from JavaScript.
  for (const [i, cost] of [1 / 3, 1e21, 5e-324, 123456.789, 2].entries()) {
    const j = s.create(repo, { todo_id: `cost${i}` });
    s.addUsage(j.id, { input_tokens: i, output_tokens: 0, cost });
    s.finish(j.id, i % 2 ? 'completed' : 'abandoned');
  }
  const failed = s.create(repo, { todo_id: 'failed' });
  s.finish(failed.id, 'failed', `crashed: ${NASTY}`);
}

/** Rows as an older build (or a hand edit) may have left them: NULLs where the columns allow. */
function seedLegacyRows(repo: string): void {
  const db = new DatabaseSync(store.dbPath);
  db.exec('PRAGMA busy_timeout = 5000');
  const insertJob = db.prepare(
    `INSERT INTO jobs (id, repo, todo_id, stage, status, started_at, updated_at) VALUES (?, ?, 'old', 'testing', 'active', ?, ?)`,
  );
  insertJob.run('legacyrow', repo, '2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z');
  db.prepare(
    `INSERT INTO changes (job_id, seq, change_id, created_at) VALUES ('legacyrow', 1, 'Iold', ?)`,
  ).run(T);
  db.prepare(
    `INSERT INTO commits (job_id, change_seq, seq, commit_id, created_at) VALUES ('legacyrow', 1, 1, 'old1', ?)`,
  ).run(T);
  // A commit whose change row is missing is not shown (as load() skips it).
  db.prepare(
    `INSERT INTO commits (job_id, change_seq, seq, commit_id, created_at) VALUES ('legacyrow', 9, 1, 'orphan', ?)`,
  ).run(T);
  db.prepare(
    `INSERT INTO agent_sessions (job_id, seq, purpose, id, transcript, started_at, usage) VALUES ('legacyrow', 1, 'implement', 'a', '/t', '', NULL)`,
  ).run();
  db.close();
}

describe('jobs.listJson', () => {
  it('is byte for byte JSON.stringify(jobs.list) for every filter, legacy rows included', () => {
    seed('r');
    seedLegacyRows('r');
    seed('other');
    for (const opts of [
      {},
      { activeOnly: true },
      { activeOnly: true, toLand: true },
      { status: 'failed' as const },
      { status: 'completed' as const },
    ]) {
      const jobs = store.jobs.list('r', opts);
      expect(jobs.length, JSON.stringify(opts)).toBeGreaterThan(0);
      expect(store.jobs.listJson('r', opts), JSON.stringify(opts)).toBe(JSON.stringify(jobs));
    }
    expect(store.jobs.listJson('nobody')).toBe('[]');
  });

  it('lists from the texts the writers keep, which agree with building them afresh', () => {
    seed('r');
    const kept = store.jobs.listJson('r');
    const db = new DatabaseSync(store.dbPath);
    const texts = db.prepare('SELECT count(*) AS n FROM jobs WHERE list_json IS NOT NULL').get() as {
      n: number;
    };
    const commitTexts = db.prepare('SELECT count(*) AS n, count(list_json) AS kept FROM commits').get() as {
      n: number;
      kept: number;
    };
    // Every job and commit written through the store has its text (so listing does not rebuild it)...
    expect(texts.n).toBe(store.jobs.list('r').length);
    expect(commitTexts.kept).toBe(commitTexts.n);
    expect(commitTexts.n).toBeGreaterThan(0);
    // ...and a database whose rows have none (an older build's) lists the same.
    db.exec('UPDATE jobs SET list_json = NULL; UPDATE commits SET list_json = NULL');
    db.close();
    expect(store.jobs.listJson('r')).toBe(kept);
    expect(kept).toBe(JSON.stringify(store.jobs.list('r')));
  });

  it('has every field of the model, with the values job show has', () => {
    seed('r');
    seedLegacyRows('r');
    const listed = JSON.parse(store.jobs.listJson('r')) as unknown[];
    // Parsing fills in nothing: every key is there. A field added to the model
    // (with its default) but not to job-json.ts fails here.
    const parsed = listed.map((j) => Job.parse(j));
    expect(listed).toStrictEqual(parsed);
    for (const j of parsed) expect(j).toStrictEqual(Job.parse(store.jobs.get(j.id)));
    const full = parsed.find((j) => j.todo_id === 'full')!;
    expect(
      full.changes.map((c) => c.commits.map((k) => [k.commit_id, k.tests_passed, k.review?.outcome ?? null])),
    ).toEqual([
      [
        ['c1', false, null],
        ['c2', true, 'REQUEST_CHANGES'],
        ['c3', null, 'ACCEPT'],
      ],
      [],
    ]);
    // Summed as whole micro-dollars: 0.3, where adding the floats gave 0.30000000000000004.
    expect(full.usage.cost).toBe(0.3);
    expect(full.agent_sessions.map((a) => Object.keys(a))).toEqual([
      ['purpose', 'id', 'transcript', 'started_at'],
      ['purpose', 'id', 'transcript', 'started_at', 'usage'],
    ]);
  });

  it('sets every field of every part of a job somewhere, so the comparisons above cover each one', () => {
    seed('r');
    seedLegacyRows('r');
    // The texts as kept by the writers, and as built on the fly (an older build's rows).
    const kept = store.jobs.listJson('r');
    const db = new DatabaseSync(store.dbPath);
    db.exec('UPDATE jobs SET list_json = NULL; UPDATE commits SET list_json = NULL');
    db.close();
    const built = store.jobs.listJson('r');
    const loaded = store.jobs.list('r');
    expect(kept).toBe(JSON.stringify(loaded));
    expect(built).toBe(kept);

    const commits = loaded.flatMap((j) => j.changes.flatMap((c) => c.commits));
    const parts: [string, z.ZodObject, object[]][] = [
      ['Job', Job, loaded],
      ['JobChange', JobChange, loaded.flatMap((j) => j.changes)],
      ['JobCommit', JobCommit, commits],
      [
        'JobReview',
        JobReview,
        [...commits.flatMap((c) => c.review ?? []), ...loaded.flatMap((j) => j.project_review ?? [])],
      ],
      ['AgentSessionRef', AgentSessionRef, loaded.flatMap((j) => j.agent_sessions)],
    ];
    for (const [name, schema, objects] of parts) {
      // A field is set when some object has it with other than the schema's default.
      const unset = Object.entries(schema.shape).filter(([key, field]) => {
        const d = (field as z.ZodType).safeParse(undefined);
        const dflt = JSON.stringify(d.success ? d.data : undefined);
        return !objects.some((o) => JSON.stringify((o as Record<string, unknown>)[key]) !== dflt);
      });
      expect(unset.map(([k]) => `${name}.${k}`)).toEqual([]);
    }
  });

  it("stores the model's default for each commit field a writer leaves out", () => {
    // The store writes a new commit from the codec's fallbacks, so it need not load zod.
    for (const w of COMMIT.writes) {
      const d = (JobCommit.shape[w.key] as z.ZodType).safeParse(undefined);
      expect([w.key, w.fallback()]).toEqual([w.key, d.success ? d.data : null]);
    }
    const j = store.jobs.create('r', { todo_id: 't' });
    store.jobs.appendChange(j.id, 'I1');
    const c = store.jobs.appendCommit(j.id, { commit_id: 'c1' });
    // Bar its id, which the store gives every iteration (iteration-history spec, IterationEntry.id).
    expect(c.id).toMatch(/^[0-9a-f]{12}$/);
    expect(c).toEqual(JobCommit.parse({ commit_id: 'c1', created_at: c.created_at, id: c.id }));
  });

  it('escapes every code point as JSON.stringify does', () => {
    let all = '';
    for (let cp = 0; cp <= 0x10ffff; cp += cp < 0x3000 ? 1 : 61) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue; // lone surrogates cannot be stored as UTF-8
      all += String.fromCodePoint(cp);
    }
    const j = store.jobs.create('r', { todo_id: 't' });
    store.jobs.setFeedback(j.id, all);
    const fast = store.jobs.listJson('r');
    const model = JSON.stringify(store.jobs.list('r'));
    // Compare around the first difference: the whole text is too long to read in a diff.
    let i = 0;
    while (i < fast.length && fast[i] === model[i]) i++;
    expect(fast.slice(i - 20, i + 20)).toBe(model.slice(i - 20, i + 20));
    expect(fast.length).toBe(model.length);
    expect((JSON.parse(fast) as { feedback: string }[])[0]!.feedback).toBe(all);
  });
});
