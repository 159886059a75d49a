// The iteration entry of the iteration-history spec (its id, its stored diff
// summary) and the file-tracking spec's FileChange.AbsPath, below the CLI:
// the store, its migration, the diff's lookups, the tracker, the status bar's count.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { FileTracker } from '../../src/agent/file-tracker.js';
import { WorkspaceRoot } from '../../src/agent/workspace-path.js';
import { UserError } from '../../src/errors.js';
import { iterationDiff, locateIteration, locateIterationPair } from '../../src/history/iteration-diff.js';
import { statsToFileChanges } from '../../src/history/snapshot.js';
import { Job, JobCommit, type FileChange } from '../../src/model/job.js';
import { statusFiles } from '../../src/dashboard/view/status-files.js';
import { openStateStore } from '../../src/state/index.js';
import { migrate } from '../../src/state/sqlite/db.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir('ii-iterentry-unit-');
afterAll(tmp.cleanup);
const T = '2026-01-01T00:00:00.000Z';

describe('iteration-history.md, Decision › 4 "Enhanced IterationEntry" › id', () => {
  it('the store gives each iteration an id of its own when it is recorded, kept through every update', () => {
    const dir = join(tmp.path, 'ids');
    const s = openStateStore({ dir });
    try {
      const j = s.jobs.create('r', { todo_id: 't' });
      s.jobs.appendChange(j.id, 'I1');
      const a = s.jobs.appendCommit(j.id, { commit_id: 'c1' });
      const b = s.jobs.appendCommit(j.id, { commit_id: 'c2' });
      expect(a.id).toMatch(/^[0-9a-f]{12}$/);
      expect(b.id).toMatch(/^[0-9a-f]{12}$/);
      expect(a.id).not.toBe(b.id);
      // The commit stage rewrites the commit: the entry keeps its id.
      const rewritten = s.jobs.updateCurrentCommit(j.id, { commit_id: 'final', iteration_commit_id: 'c2' });
      expect(rewritten.id).toBe(b.id);
      expect(s.jobs.get(j.id)!.changes[0]!.commits.map((c) => c.id)).toEqual([a.id, b.id]);
      expect(s.jobs.listJson('r')).toBe(JSON.stringify(s.jobs.list('r')));
    } finally {
      s.close();
    }
  });

  it('migration 17 gives recorded iterations ids and their files abs_path, and stores no summary for them', () => {
    const dir = join(tmp.path, 'm17');
    mkdirSync(dir, { recursive: true });
    const raw = new DatabaseSync(join(dir, 'state.db'));
    migrate(raw, 0, 16);
    const job = raw.prepare(
      `INSERT INTO jobs (id, repo, todo_id, stage, status, started_at, updated_at, workspace_path, list_json)
       VALUES (?, 'r', 't', 'implementing', 'completed', ?, ?, ?, '{"stale":true}')`,
    );
    job.run('j1', T, T, '/ws/1/');
    job.run('j2', T, T, null);
    const change = raw.prepare(
      "INSERT INTO changes (job_id, seq, change_id, created_at) VALUES (?, 1, 'I1', ?)",
    );
    change.run('j1', T);
    change.run('j2', T);
    const commit = raw.prepare(
      'INSERT INTO commits (job_id, change_seq, seq, commit_id, created_at, files, list_json) VALUES (?, 1, ?, ?, ?, ?, \'{"stale":true}\')',
    );
    const files = JSON.stringify([
      { path: 'src/a "q".ts', is_new: true, is_deleted: false, additions: 2, deletions: 0 },
      { path: 'b.txt', is_new: false, is_deleted: false, additions: 1, deletions: 1 },
    ]);
    commit.run('j1', 1, 'c1', T, files);
    commit.run('j1', 2, 'c2', T, '[]');
    commit.run('j2', 1, 'd1', T, files);
    raw.close();
    const s = openStateStore({ dir });
    try {
      const [c1, c2] = s.jobs.get('j1')!.changes[0]!.commits;
      const d1 = s.jobs.get('j2')!.changes[0]!.commits[0]!;
      for (const c of [c1!, c2!, d1]) {
        expect(c.id).toMatch(/^[0-9a-f]{12}$/);
        expect(c.diff_summary).toBeNull();
      }
      expect(new Set([c1!.id, c2!.id, d1.id]).size).toBe(3);
      expect(c1!.files).toEqual([
        {
          path: 'src/a "q".ts',
          is_new: true,
          is_deleted: false,
          additions: 2,
          deletions: 0,
          abs_path: '/ws/1/src/a "q".ts',
        },
        {
          path: 'b.txt',
          is_new: false,
          is_deleted: false,
          additions: 1,
          deletions: 1,
          abs_path: '/ws/1/b.txt',
        },
      ]);
      expect(c2!.files).toEqual([]);
      // No workspace recorded: not known.
      expect(d1.files.map((f) => f.abs_path)).toEqual([null, null]);
      // The listing texts were rebuilt, and agree with the loader.
      expect(s.jobs.listJson('r')).toBe(JSON.stringify(s.jobs.list('r')));
      for (const j of JSON.parse(s.jobs.listJson('r')) as Job[]) Job.parse(j);
    } finally {
      s.close();
    }
  });
});

const commit = (over: Partial<JobCommit>): JobCommit =>
  JobCommit.parse({ commit_id: 'c', created_at: T, ...over });
const review = (outcome: 'ACCEPT' | 'REQUEST_CHANGES') => ({
  outcome,
  comments: '',
  agent_session_id: null,
  reviewed_at: T,
});

function job(): Job {
  return Job.parse({
    id: 'j1',
    repo: 'r',
    todo_id: 't',
    base_rev: 'base',
    started_at: T,
    updated_at: T,
    changes: [
      {
        change_id: 'I1',
        created_at: T,
        commits: [
          commit({ id: 'aaaa11112222', commit_id: 'c1', review: review('REQUEST_CHANGES') }),
          commit({
            id: 'aaaa33334444',
            commit_id: 'c2',
            review: review('ACCEPT'),
            diff_summary: 'stored when it ended',
          }),
        ],
      },
      {
        change_id: 'I2',
        created_at: T,
        commits: [commit({ id: 'bbbb55556666', commit_id: 'c3' })],
      },
    ],
  });
}

describe('iteration-history.md, Decision › 2 "getIterationDiff": iterations by id', () => {
  it('an id, a unique prefix (any case) or change.iteration name the same iteration', () => {
    const j = job();
    const byPos = locateIterationPair(j, '1.1', '2.1');
    for (const [a, b] of [
      ['aaaa11112222', 'bbbb55556666'],
      ['aaaa1', 'BBBB'],
      ['1.1', 'bbbb55556666'],
    ] as const) {
      const r = locateIterationPair(j, a, b);
      expect(r.from).toEqual(byPos.from);
      expect(r.change).toBe(2);
      expect(r.fromCommit).toBe('c1');
    }
  });

  it('an ambiguous, too short or unknown id is a UserError saying what to give', () => {
    const j = job();
    expect(() => locateIterationPair(j, 'aaaa', '2.1')).toThrow(/names 2 iterations .*give more of the id/);
    expect(() => locateIterationPair(j, 'aa', '2.1')).toThrow(
      /--from 'aa' is not an iteration: give change.iteration.*or an iteration's id, or 4 or more/,
    );
    expect(() => locateIterationPair(j, 'cccc', '2.1')).toThrow(UserError);
    expect(() => locateIterationPair(j, 'cccc', '2.1')).toThrow(
      "job j1 has no iteration with id 'cccc' (--from)",
    );
  });

  it("the diff names both entries' ids (IterationDiff.iterationId, previousIterationId)", () => {
    const j = job();
    const d = iterationDiff(j, locateIteration(j, 2, 1), null);
    expect(d.iteration_id).toBe('bbbb55556666');
    // The first iteration of a change is compared with the last of the one before.
    expect(d.previous_iteration_id).toBe('aaaa33334444');
    const first = iterationDiff(j, locateIteration(j, 1, 1), null);
    expect(first.previous_iteration_id).toBeNull(); // the base
  });
});

describe('iteration-history.md, Architecture "completeIteration" › computeDiffSummary, updateIterationEntry', () => {
  it('the stored summary is read; it is computed for --recompute, a pair, and an entry with none', () => {
    const j = job();
    const ref = locateIteration(j, 1, 2);
    const stored = iterationDiff(j, ref, null);
    expect(stored).toMatchObject({ summary: 'stored when it ended', summary_stored: true });
    const again = iterationDiff(j, ref, null, { recompute: true });
    expect(again.summary_stored).toBe(false);
    expect(again.summary).toMatch(/^Change 1, iteration 2; 0 files added/);
    const pair = iterationDiff(j, locateIterationPair(j, '1.1', '1.2'), null);
    expect(pair.summary_stored).toBe(false);
    expect(pair.summary).toContain('Change 1, iteration 1 → change 1, iteration 2');
    const none = iterationDiff(j, locateIteration(j, 1, 1), null);
    expect(none.summary_stored).toBe(false);
    expect(none.summary).toMatch(/^Change 1, iteration 1; /);
  });
});

describe('file-tracking.md, Technical Implementation › Data Structures: FileChange{Path, AbsPath}', () => {
  it('the tracker keeps the relative path and the absolute one, whichever the agent named', () => {
    const ws = join(tmp.path, 'ws');
    mkdirSync(ws, { recursive: true });
    const seen: FileChange[] = [];
    const t = new FileTracker(new WorkspaceRoot(ws), (f) => seen.push(f));
    const done = (id: string, path: string) => {
      t.ingest({ sessionUpdate: 'tool_call', toolCallId: id, kind: 'edit', status: 'pending' });
      t.ingest({
        sessionUpdate: 'tool_call_update',
        toolCallId: id,
        status: 'completed',
        content: [{ type: 'diff', path, oldText: 'a', newText: 'b' }],
      });
    };
    done('1', join(ws, 'src/x.ts'));
    done('2', 'rel/y.ts');
    done('3', join(ws, 'src/x.ts'));
    expect(t.files().map((f) => [f.path, f.abs_path])).toEqual([
      ['src/x.ts', join(ws, 'src/x.ts')],
      ['rel/y.ts', join(ws, 'rel/y.ts')],
    ]);
    expect(seen.every((f) => f.abs_path === join(ws, f.path))).toBe(true);
  });

  it("the version control's list gets them too", () => {
    expect(
      statsToFileChanges([{ path: 'a/b.ts', status: 'added', additions: 1, deletions: 0 }], '/ws/3/'),
    ).toEqual([
      {
        path: 'a/b.ts',
        abs_path: '/ws/3/a/b.ts',
        is_new: true,
        is_deleted: false,
        additions: 1,
        deletions: 0,
      },
    ]);
  });
});

describe('file-tracking.md, Requirements › Functional › 2 and 5: the status bar counts the iteration', () => {
  const file = (path: string): FileChange => ({
    path,
    abs_path: null,
    is_new: false,
    is_deleted: false,
    additions: 1,
    deletions: 0,
  });
  const withFiles = (status: Job['status']) => {
    const j = job();
    j.status = status;
    j.changes[0]!.commits[0]!.files = [file('a'), file('b')];
    j.changes[0]!.commits[1]!.files = [file('b')];
    j.changes[1]!.commits[0]!.files = [file('c'), file('d'), file('e')];
    return j;
  };

  it("live: the current iteration's set, beside the job's total", () => {
    const j = withFiles('active');
    const s = { files: { j1: [file('a'), file('b'), file('c')] }, iterationFiles: { j1: [file('c')] } };
    expect(statusFiles(s, j)).toEqual({ count: 1, scope: 'this iteration', total: 3 });
    // The next iteration started: empty, the total stays.
    expect(statusFiles({ ...s, iterationFiles: { j1: [] } }, j)).toEqual({
      count: 0,
      scope: 'this iteration',
      total: 3,
    });
  });

  it("from the record: the last iteration's files, and every file the job changed", () => {
    const j = withFiles('completed');
    expect(statusFiles({ files: {}, iterationFiles: {} }, j)).toEqual({
      count: 3,
      scope: 'last iteration',
      total: 5,
    });
    // A change opened with no iteration yet: the last recorded iteration stands.
    j.changes.push({ change_id: 'I3', created_at: T, commits: [] });
    expect(statusFiles({ files: {}, iterationFiles: {} }, j)?.count).toBe(3);
    expect(statusFiles({ files: {}, iterationFiles: {} }, null)).toBeNull();
  });
});
