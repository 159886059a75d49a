import { describe, expect, it } from 'vitest';
import { iterationDiff, locateIteration } from '../../src/history/iteration-diff.js';
import { artifactCount, takeSnapshot } from '../../src/history/snapshot.js';
import { Job, JobCommit, type IterationSnapshot } from '../../src/model/job.js';
import { UserError } from '../../src/errors.js';

const T = '2026-01-01T00:00:00.000Z';
const snap = (over: Partial<IterationSnapshot>): IterationSnapshot => ({
  stage: 'implementing',
  status: 'active',
  files_created: [],
  files_modified: [],
  files_removed: [],
  usage: { input_tokens: 0, output_tokens: 0, cost: 0 },
  artifact_count: 0,
  taken_at: T,
  ...over,
});
const commit = (over: Partial<JobCommit>): JobCommit =>
  JobCommit.parse({ commit_id: 'c', created_at: T, ...over });

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
          commit({
            commit_id: 'c1',
            tests_passed: false,
            before: snap({}),
            after: snap({
              stage: 'testing',
              files_created: ['a.ts'],
              usage: { input_tokens: 100, output_tokens: 10, cost: 0.1 },
            }),
          }),
          commit({
            commit_id: 'c2',
            tests_passed: true,
            review: { outcome: 'ACCEPT', comments: '', agent_session_id: null, reviewed_at: T },
            before: snap({
              files_created: ['a.ts'],
              usage: { input_tokens: 100, output_tokens: 10, cost: 0.1 },
            }),
            after: snap({
              stage: 'committing',
              files_created: ['a.ts', 'b.ts'],
              usage: { input_tokens: 250, output_tokens: 30, cost: 0.25 },
            }),
          }),
        ],
      },
      { change_id: 'I2', created_at: T, commits: [commit({ commit_id: 'c3' })] },
    ],
  });
}

describe('snapshots', () => {
  it('take the stage, status, usage, sorted files and the iteration count', () => {
    const j = job();
    const s = takeSnapshot(
      { ...j, stage: 'testing' },
      [
        { path: 'z.ts', status: 'added' },
        { path: 'a.ts', status: 'added' },
        { path: 'm.ts', status: 'modified' },
        { path: 'gone.ts', status: 'removed' },
      ],
      new Date(T),
    );
    expect(s).toEqual({
      stage: 'testing',
      status: 'active',
      files_created: ['a.ts', 'z.ts'],
      files_modified: ['m.ts'],
      files_removed: ['gone.ts'],
      usage: j.usage,
      artifact_count: 3,
      taken_at: T,
    });
    expect(artifactCount({ changes: [] })).toBe(0);
  });
});

describe('locateIteration', () => {
  it('defaults to the last iteration of the last change, compared with the previous change', () => {
    const r = locateIteration(job());
    expect([r.change, r.iteration, r.commit.commit_id, r.previous, r.fromCommit]).toEqual([
      2,
      1,
      'c3',
      null,
      'c2',
    ]);
  });
  it('the first iteration of the first change is compared with the base', () => {
    expect(locateIteration(job(), 1, 1).fromCommit).toBe('base');
    expect(locateIteration(job(), 1, 2).fromCommit).toBe('c1');
  });
  it('out of range is a UserError saying the range', () => {
    expect(() => locateIteration(job(), 3)).toThrow(/--change must be 1 to 2/);
    expect(() => locateIteration(job(), 1, 5)).toThrow(/--iteration must be 1 to 2/);
    expect(() => locateIteration({ ...job(), changes: [] })).toThrow(UserError);
  });
});

describe('iterationDiff', () => {
  it('against the previous iteration: stage, status, files from git, usage delta, summary', () => {
    const j = job();
    const d = iterationDiff(j, locateIteration(j, 1, 2), [
      { path: 'b.ts', status: 'added', additions: 3, deletions: 0 },
      { path: 'a.ts', status: 'modified', additions: 1, deletions: 1 },
    ]);
    expect(d).toMatchObject({
      change: 1,
      iteration: 2,
      from_commit: 'c1',
      to_commit: 'c2',
      stage: { from: 'testing', to: 'committing' },
      status: { from: 'active', to: 'active' },
      files_added: ['b.ts'],
      files_modified: ['a.ts'],
      files_removed: [],
      usage_delta: { input_tokens: 150, output_tokens: 20, cost: 0.15 },
    });
    expect(d.summary).toBe(
      'Change 1, iteration 2; 1 file added, 1 modified, 0 removed; +150 input / +20 output tokens, +$0.1500; review ACCEPT (previous iteration: tests failed).',
    );
  });
  it('without git facts, the files come from the snapshots; old records show what they have', () => {
    const j = job();
    const d = iterationDiff(j, locateIteration(j, 1, 2), null);
    expect(d.files_added).toEqual(['b.ts']);
    expect(d.files_modified).toEqual(['a.ts']);
    const legacy = iterationDiff(j, locateIteration(j, 2, 1), null);
    expect(legacy.stage).toEqual({ from: null, to: null });
    expect(legacy.files_added).toEqual([]);
    expect(legacy.summary).toContain('not tested (previous iteration: none, first of the change)');
  });
});
