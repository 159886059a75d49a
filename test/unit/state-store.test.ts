import { closeSync, mkdirSync, openSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore, repoSlug, stateDir } from '../../src/state/index.js';
import { migrate, openDatabase } from '../../src/state/sqlite/db.js';
import { SCHEMA_VERSION } from '../../src/state/sqlite/migrations.js';
import { tempDir } from '../helpers/tmp.js';

const T = '2026-11-22T00:00:00.000Z';
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

describe('paths', () => {
  it('honours XDG_STATE_HOME and falls back to ~/.local/state', () => {
    expect(stateDir({ XDG_STATE_HOME: '/x' })).toBe('/x/incrementum');
    expect(stateDir({ HOME: '/home/u' })).toBe('/home/u/.local/state/incrementum');
  });
  it('repo slug is readable and distinct for same-named clones', () => {
    expect(repoSlug('/a/My Repo')).toMatch(/^my-repo-[0-9a-f]{8}$/);
    expect(repoSlug('/a/x')).not.toBe(repoSlug('/b/x'));
    expect(repoSlug('/a/x')).toBe(repoSlug('/a/x'));
  });
  it('the database file is private (0600)', () => {
    expect(statSync(store.dbPath).mode & 0o777).toBe(0o600);
  });
});

describe('todos', () => {
  it('creates with defaults, lists by priority, filters by status', () => {
    const a = store.todos.create('r', { title: 'A' });
    const b = store.todos.create('r', { title: 'B', priority: 0, type: 'bug', description: 'd' });
    expect(a).toMatchObject({
      title: 'A',
      type: 'task',
      priority: 2,
      status: 'open',
      deps: [],
      description: '',
    });
    expect(a.id).toMatch(/^[0-9a-f]{8}$/);
    expect(store.todos.list('r').map((t) => t.title)).toEqual(['B', 'A']);
    store.todos.setStatus('r', b.id, 'done');
    expect(store.todos.list('r', { status: 'done' }).map((t) => t.id)).toEqual([b.id]);
    expect(store.todos.list('other')).toEqual([]);
  });
  it('resolves deps given as prefixes', () => {
    const a = store.todos.create('r', { title: 'A' });
    const b = store.todos.create('r', { title: 'B', deps: [a.id.slice(0, 5)] });
    expect(b.deps).toEqual([a.id]);
  });
  it('rejects bad input with clear errors', () => {
    expect(() => store.todos.create('r', { title: '  ' })).toThrow(/needs a title/);
    expect(() => store.todos.create('r', { title: 'x', priority: 7 })).toThrow(/0 \(highest\) to 4/);
    expect(() => store.todos.create('r', { title: 'x', deps: ['zzzz'] })).toThrow(/no todo matches "zzzz"/);
  });
  it('resolves unique prefixes, and names candidates when ambiguous', () => {
    const made = Array.from({ length: 40 }, (_, i) => store.todos.create('r', { title: `t${i}` }));
    const first = made[0]!;
    expect(store.todos.resolve('r', first.id).id).toBe(first.id);
    // 40 ids over 16 first characters: some first character is shared.
    const byFirst = new Map<string, string[]>();
    for (const t of made) byFirst.set(t.id[0]!, [...(byFirst.get(t.id[0]!) ?? []), t.id]);
    const [ch, ids] = [...byFirst].find(([, v]) => v.length > 1)!;
    const err = (() => {
      try {
        store.todos.resolve('r', ch);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(UserError);
    for (const id of ids) expect(err!.message).toContain(id);
    expect(() => store.todos.resolve('r', 'xyz')).toThrow(/no todo matches/);
    expect(() => store.todos.resolve('other', first.id)).toThrow(/no todo matches/);
  });
});

describe('job mutations', () => {
  const review = (outcome: 'ACCEPT' | 'REQUEST_CHANGES' | 'ABANDON', comments = '') => ({
    outcome,
    comments,
    agent_session_id: 'a2',
    reviewed_at: T,
  });

  it('records a whole job history', () => {
    const todo = store.todos.create('r', { title: 'A' });
    let job = store.jobs.create('r', { todo_id: todo.id, base_rev: 'abc', pid: 42, host: 'h' });
    expect(job).toMatchObject({
      status: 'active',
      stage: 'implementing',
      changes: [],
      auto_commit: true,
      heartbeat_at: expect.any(String),
    });
    store.jobs.setSession(job.id, 's1', '/ws/1');
    job = store.jobs.get(job.id)!;
    expect(job.workspace_path).toBe('/ws/1');
    store.jobs.addAgentSession(job.id, { purpose: 'implement', id: 'a1', transcript: '/t/a1.jsonl' });
    store.jobs.appendChange(job.id, 'I1');
    const c1 = store.jobs.appendCommit(job.id, {
      commit_id: 'c1',
      draft_message: 'm',
      tests_passed: null,
      test_results: [],
      review: null,
      agent_session_id: 'a1',
      files: [{ path: 'x', abs_path: '/ws/x', is_new: true, is_deleted: false, additions: 3, deletions: 0 }],
      usage: { input_tokens: 10, output_tokens: 5, cost: 0.01 },
      feedback: null,
      before: null,
      after: null,
    });
    expect(c1).toMatchObject({ commit_id: 'c1', tests_passed: null, review: null });
    store.jobs.setStage(job.id, 'testing');
    store.jobs.updateCurrentCommit(job.id, {
      tests_passed: true,
      test_results: [{ command: 'npm test', exit_code: 0, duration_ms: 5 }],
    });
    store.jobs.setStage(job.id, 'reviewing');
    store.jobs.updateCurrentCommit(job.id, { review: review('REQUEST_CHANGES', 'add tests') });
    store.jobs.setFeedback(job.id, 'add tests');
    store.jobs.appendCommit(job.id, {
      commit_id: 'c2',
      draft_message: '',
      tests_passed: true,
      test_results: [],
      review: null,
      agent_session_id: null,
      files: [],
      usage: { input_tokens: 0, output_tokens: 0, cost: 0 },
      feedback: 'add tests',
      before: null,
      after: null,
    });
    store.jobs.updateCurrentCommit(job.id, { review: review('ACCEPT') });
    store.jobs.appendChange(job.id, 'I2');
    store.jobs.addUsage(job.id, { input_tokens: 10, output_tokens: 5, cost: 0.01 });
    store.jobs.setProjectReview(job.id, review('ACCEPT', 'good'));
    job = store.jobs.finish(job.id, 'completed');

    expect(job.status).toBe('completed');
    expect(job.completed_at).toEqual(expect.any(String));
    expect(job.feedback).toBe('add tests');
    expect(job.agent_sessions).toEqual([expect.objectContaining({ purpose: 'implement', id: 'a1' })]);
    expect(job.changes.map((c) => c.change_id)).toEqual(['I1', 'I2']);
    expect(job.changes[0]!.commits.map((c) => [c.commit_id, c.tests_passed, c.review?.outcome])).toEqual([
      ['c1', true, 'REQUEST_CHANGES'],
      ['c2', true, 'ACCEPT'],
    ]);
    expect(job.changes[0]!.commits[0]!.review?.comments).toBe('add tests');
    expect(job.changes[0]!.commits[0]!.files[0]).toMatchObject({ path: 'x', is_new: true, additions: 3 });
    expect(job.changes[0]!.commits[0]!.test_results[0]).toMatchObject({ command: 'npm test', exit_code: 0 });
    expect(job.changes[1]!.commits).toEqual([]);
    expect(job.usage).toEqual({ input_tokens: 10, output_tokens: 5, cost: 0.01 });
    expect(job.project_review?.comments).toBe('good');
    expect(store.jobs.list('r')).toHaveLength(1);
    expect(store.jobs.list('r', { activeOnly: true })).toHaveLength(0);
    expect(store.jobs.list('r', { status: 'completed' })).toHaveLength(1);
  });

  it('costs add up in whole micro-dollars: no float noise in the total, the sessions or the commits', () => {
    const job = store.jobs.create('r', { todo_id: 't' });
    store.jobs.addAgentSession(job.id, { purpose: 'implement', id: 'a1', transcript: '/t/a1' });
    store.jobs.addAgentSession(job.id, { purpose: 'review', id: 'a2', transcript: '/t/a2' });
    // 0.0117 + 0.0117 is 0.023399999999999997 in floats.
    store.jobs.recordAgentUsage(job.id, 'a1', { input_tokens: 10, output_tokens: 2, cost: 0.0117 });
    store.jobs.recordAgentUsage(job.id, 'a2', { input_tokens: 5, output_tokens: 1, cost: 0.0117 });
    let j = store.jobs.get(job.id)!;
    expect(j.usage).toEqual({ input_tokens: 15, output_tokens: 3, cost: 0.0234 });
    expect(j.agent_sessions.map((a) => [a.id, a.usage])).toEqual([
      ['a1', { input_tokens: 10, output_tokens: 2, cost: 0.0117 }],
      ['a2', { input_tokens: 5, output_tokens: 1, cost: 0.0117 }],
    ]);
    // An agent's noisy or hostile figures are stored rounded to the micro-dollar, or as nothing.
    store.jobs.addUsage(job.id, { input_tokens: 0, output_tokens: 0, cost: 0.1 + 0.2 });
    j = store.jobs.get(job.id)!;
    expect(j.usage.cost).toBe(0.3234);
    store.jobs.addUsage(job.id, { input_tokens: 0, output_tokens: 0, cost: Number.NaN });
    j = store.jobs.get(job.id)!;
    expect(j.usage.cost).toBe(0.3234);
    store.jobs.appendChange(job.id, 'I1');
    const c = store.jobs.appendCommit(job.id, {
      commit_id: 'c1',
      usage: { input_tokens: 1, output_tokens: 1, cost: 0.023399999999999997 },
    });
    expect(c.usage.cost).toBe(0.0234);
    // A fraction of 7+ digits is float noise; ids and stamps have no decimal point.
    expect(JSON.stringify(store.jobs.get(job.id))).not.toMatch(/\d\.\d{7,}/);
    expect(store.jobs.listJson('r')).toBe(JSON.stringify(store.jobs.list('r')));
  });

  it('the commit stage keeps the final commit id, and the iteration id beside it', () => {
    const job = store.jobs.create('r', { todo_id: 't' });
    store.jobs.appendChange(job.id, 'I1');
    const c = store.jobs.appendCommit(job.id, { commit_id: 'iter1' });
    expect(c.iteration_commit_id).toBeNull();
    const after = store.jobs.updateCurrentCommit(job.id, {
      commit_id: 'final1',
      iteration_commit_id: 'iter1',
    });
    expect(after).toMatchObject({ commit_id: 'final1', iteration_commit_id: 'iter1' });
    expect(store.jobs.get(job.id)?.changes[0]?.commits[0]).toMatchObject({
      commit_id: 'final1',
      iteration_commit_id: 'iter1',
    });
    expect(store.jobs.listJson('r')).toBe(JSON.stringify(store.jobs.list('r')));
  });

  it('failing and abandoning keep the reason', () => {
    const a = store.jobs.create('r', { todo_id: 't' });
    const b = store.jobs.create('r', { todo_id: 't' });
    expect(store.jobs.finish(a.id, 'failed', 'agent crashed').failure_reason).toBe('agent crashed');
    expect(store.jobs.finish(b.id, 'abandoned', 'reviewer abandoned').status).toBe('abandoned');
  });

  it('heartbeat records pid, host and time without touching updated_at', () => {
    const j = store.jobs.create('r', { todo_id: 't' });
    store.jobs.heartbeat(j.id, 99, 'box');
    const after = store.jobs.get(j.id)!;
    expect(after).toMatchObject({ pid: 99, host: 'box', updated_at: j.updated_at });
    expect(after.heartbeat_at).toEqual(expect.any(String));
  });

  it('a commit needs a change; unknown jobs are clear errors', () => {
    const j = store.jobs.create('r', { todo_id: 't' });
    expect(() => store.jobs.appendCommit(j.id, { commit_id: 'c' } as never)).toThrow(/no change/);
    expect(() => store.jobs.setStage('nope', 'testing')).toThrow(/no job nope/);
    expect(() => store.jobs.resolve('r', 'zz')).toThrow(/no job matches/);
    expect(store.jobs.resolve('r', j.id.slice(0, 6)).id).toBe(j.id);
  });

  it('lists only the jobs written after a store version, by any mutation or a heartbeat', () => {
    const a = store.jobs.create('r', { todo_id: 't' });
    const b = store.jobs.create('r', { todo_id: 't' });
    const c = store.jobs.create('other', { todo_id: 't' });
    const untouched = store.jobs.create('r', { todo_id: 't' });
    const seen = store.jobs.version();
    expect(store.jobs.listChangedAfter(seen)).toEqual([]);
    store.jobs.setStage(a.id, 'testing');
    store.jobs.heartbeat(b.id, 7, 'h');
    store.jobs.setStage(c.id, 'testing');
    const ids = (jobs: { id: string }[]) => jobs.map((j) => j.id).sort();
    expect(ids(store.jobs.listChangedAfter(seen, 'r'))).toEqual([a.id, b.id].sort());
    expect(ids(store.jobs.listChangedAfter(seen))).toEqual([a.id, b.id, c.id].sort());
    expect(ids(store.jobs.listChangedAfter(seen - 4, 'r'))).toContain(untouched.id);
    expect(store.jobs.listChangedAfter(store.jobs.version())).toEqual([]);
  });

  it('loads more jobs than fit one chunk with every job its own children', () => {
    const n = 1234;
    for (let i = 0; i < n; i++) {
      const j = store.jobs.create('r', { todo_id: `t${i}` });
      store.jobs.appendChange(j.id, `I${i}`);
      for (let k = 0; k <= i % 3; k++) store.jobs.appendCommit(j.id, { commit_id: `${i}-${k}` });
    }
    const all = store.jobs.list('r');
    expect(all).toHaveLength(n);
    for (const j of all) {
      const i = Number(j.todo_id.slice(1));
      expect(j.changes.map((c) => c.change_id)).toEqual([`I${i}`]);
      expect(j.changes[0]!.commits.map((c) => c.commit_id)).toEqual(
        Array.from({ length: (i % 3) + 1 }, (_, k) => `${i}-${k}`),
      );
    }
  });

  it('every mutation bumps the version', () => {
    const v0 = store.jobs.version();
    const j = store.jobs.create('r', { todo_id: 't' });
    store.jobs.setStage(j.id, 'testing');
    expect(store.jobs.version()).toBe(v0 + 2);
  });
});

describe('control requests', () => {
  it('are pending until handled', () => {
    const r = store.control.request('j1', 'abandon', 'from dashboard');
    expect(store.control.pending('j1')).toEqual([
      expect.objectContaining({ id: r.id, kind: 'abandon', reason: 'from dashboard' }),
    ]);
    store.control.markHandled(r.id);
    expect(store.control.pending('j1')).toEqual([]);
  });
});

describe('sessions and workspaces', () => {
  it('acquire reuses a released workspace, else reserves the next number', () => {
    const p = (n: number) => `/ws/${n}`;
    const b = (n: number) => `ii/ws-${n}`;
    const a1 = store.workspaces.acquire('r', 's1', p, b);
    const a2 = store.workspaces.acquire('r', 's2', p, b);
    expect([a1.workspace.path, a1.created, a2.workspace.path, a2.created]).toEqual([
      '/ws/1',
      true,
      '/ws/2',
      true,
    ]);
    store.workspaces.release('/ws/1');
    // Claimed again, it takes the branch by the naming of the day (an
    // earlier version's workspace moves to today's).
    const a3 = store.workspaces.acquire('r', 's3', p, (n) => `ii/workspace-${n}/work`);
    expect([a3.workspace.path, a3.created, a3.workspace.session_id, a3.workspace.branch]).toEqual([
      '/ws/1',
      false,
      's3',
      'ii/workspace-1/work',
    ]);
    store.workspaces.setBaseRev('/ws/1', 'abc');
    expect(store.workspaces.list('r').map((w) => [w.path, w.status, w.base_rev])).toEqual([
      ['/ws/1', 'acquired', 'abc'],
      ['/ws/2', 'acquired', null],
    ]);
    store.workspaces.remove('/ws/2');
    expect(store.workspaces.list()).toHaveLength(1);
  });
  it('never hands out the number of a removed workspace again, nor frees one', () => {
    // A landing or a prune drops the record, then removes the directory: a
    // job starting meanwhile must not be given that path and branch.
    const p = (n: number) => `/ws/${n}`;
    const b = (n: number) => `ii/ws-${n}`;
    store.workspaces.acquire('r', 's1', p, b);
    store.workspaces.acquire('r', 's2', p, b);
    store.workspaces.release('/ws/2');
    expect(store.workspaces.removeIfFree('/ws/2')).toBe(true);
    const a3 = store.workspaces.acquire('r', 's3', p, b);
    expect([a3.workspace.path, a3.workspace.branch, a3.created]).toEqual(['/ws/3', 'ii/ws-3', true]);
    // Released after its removal (a session finishing late): stays removed.
    store.workspaces.release('/ws/2');
    expect(store.workspaces.list('r').map((w) => w.path)).toEqual(['/ws/1', '/ws/3']);
    // remove(path, session) only while that session holds it.
    expect(store.workspaces.remove('/ws/3', 's1')).toBe(false);
    expect(store.workspaces.remove('/ws/3', 's3')).toBe(true);
    expect(store.workspaces.remove('/ws/1')).toBe(true);
    expect(store.workspaces.list('r')).toEqual([]);
    expect(store.workspaces.acquire('r', 's4', p, b).workspace.path).toBe('/ws/4');
    // Another repository counts its own.
    expect(store.workspaces.acquire('q', 's5', p, b).workspace.path).toBe('/ws/1');
  });
  it('sessions move between statuses', () => {
    const s = store.sessions.create('r', { todo_id: 't', workspace_path: '/ws/1', topic: 'x' });
    expect(s.status).toBe('active');
    expect(store.sessions.setStatus(s.id, 'done').status).toBe('done');
    expect(store.sessions.list('r')).toHaveLength(1);
  });
});

describe('opening a database that cannot be trusted', () => {
  it('refuses a file that is not SQLite, and leaves it untouched', () => {
    const bad = join(tmp.path, 'bad', 'state.db');
    openStateStore({ dir: join(tmp.path, 'bad') }).close();
    writeFileSync(bad, 'this is not a database, but somebody may need it');
    expect(() => openStateStore({ dir: join(tmp.path, 'bad') })).toThrow(
      /is not an SQLite database[\s\S]*left untouched/,
    );
    expect(statSync(bad).size).toBe(48);
  });
  it('refuses a newer schema, and leaves it untouched', () => {
    const dir = join(tmp.path, 'new');
    openStateStore({ dir }).close();
    const raw = new DatabaseSync(join(dir, 'state.db'));
    raw.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openStateStore({ dir })).toThrow(new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer`));
    const again = new DatabaseSync(join(dir, 'state.db'));
    expect((again.prepare('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(
      SCHEMA_VERSION + 1,
    );
    again.close();
  });
  it('refuses a database that fails its integrity check', () => {
    const dir = join(tmp.path, 'corrupt');
    const s = openStateStore({ dir });
    for (let i = 0; i < 200; i++) s.todos.create('r', { title: `todo ${i} ${'x'.repeat(200)}` });
    s.close();
    const path = join(dir, 'state.db');
    // Scribble over an interior page: the header stays valid, the b-tree does not.
    const fs = { openSync, writeSync, closeSync };
    const fd = fs.openSync(path, 'r+');
    fs.writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, 4096 * 3);
    fs.closeSync(fd);
    expect(() => openStateStore({ dir, integrityCheck: true })).toThrow(
      /state database .* is damaged: (its integrity check failed|.*SQLITE_CORRUPT)/,
    );
  });
});

describe('migrations', () => {
  it('7: a summed REAL cost becomes whole micro-dollars; old commits have no iteration id', () => {
    const dir = join(tmp.path, 'm7');
    mkdirSync(dir, { recursive: true });
    const raw = new DatabaseSync(join(dir, 'state.db'));
    migrate(raw, 0, 6);
    raw
      .prepare(
        `INSERT INTO jobs (id, repo, todo_id, stage, status, cost, started_at, updated_at, list_json)
         VALUES ('j1', 'r', 't', 'implementing', 'completed', 0.023399999999999997, ?, ?, '{"stale":true}')`,
      )
      .run(T, T);
    raw
      .prepare(
        `INSERT INTO jobs (id, repo, todo_id, stage, status, cost, started_at, updated_at)
         VALUES ('j2', 'r', 't', 'implementing', 'completed', 1e300, ?, ?)`,
      )
      .run(T, T);
    raw.prepare("INSERT INTO changes (job_id, seq, change_id, created_at) VALUES ('j1', 1, 'I1', ?)").run(T);
    raw
      .prepare(
        "INSERT INTO commits (job_id, change_seq, seq, commit_id, created_at) VALUES ('j1', 1, 1, 'c1', ?)",
      )
      .run(T);
    raw.close();
    const s = openStateStore({ dir });
    try {
      const j1 = s.jobs.get('j1')!;
      expect(j1.usage.cost).toBe(0.0234);
      expect(j1.changes[0]!.commits[0]).toMatchObject({ commit_id: 'c1', iteration_commit_id: null });
      expect(s.jobs.get('j2')!.usage.cost).toBe(Number.MAX_SAFE_INTEGER / 1e6);
      expect(s.jobs.listJson('r')).toBe(JSON.stringify(s.jobs.list('r')));
    } finally {
      s.close();
    }
  });

  it.each(Array.from({ length: SCHEMA_VERSION }, (_, v) => v))(
    'migrates forward from version %i keeping data',
    (from) => {
      const dir = join(tmp.path, `m${from}`);
      mkdirSync(dir, { recursive: true });
      const path = join(dir, 'state.db');
      const raw = new DatabaseSync(path);
      migrate(raw, 0, from);
      if (from >= 1)
        raw
          .prepare("INSERT INTO todos (id, repo, title, created_at, updated_at) VALUES ('t1','r','old',?,?)")
          .run(T, T);
      raw.close();
      const db = openDatabase(path);
      expect((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(
        SCHEMA_VERSION,
      );
      db.close();
      const s = openStateStore({ dir });
      if (from >= 1) expect(s.todos.get('r', 't1')?.title).toBe('old');
      const j = s.jobs.create('r', { todo_id: 't1' });
      expect(s.jobs.get(j.id)?.retried_from).toBeNull();
      s.close();
    },
  );
});
