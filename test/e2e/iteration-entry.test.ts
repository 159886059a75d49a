// A job's iterations as the iteration-history spec's entries
// (../shared/specs/iteration-history.md) and its files as the file-tracking
// spec's FileChange (../shared/specs/file-tracking.md), on a real job of the
// scripted agent: a rejected iteration, then an accepted one.
import { readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedIterationDiff } from '../../src/history/iteration-diff.js';
import type { Job } from '../../src/model/job.js';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';

let fx: JobFixture;
let jobId: string;
let job: Job;

const commits = () => job.changes.flatMap((c) => c.commits);
const dbPath = () => join(fx.tmp.path, 'state', 'incrementum', 'state.db');

beforeAll(() => {
  fx = new JobFixture('ii-iterentry-');
  fx.setup();
  const s = fx.scenario('two', {
    implement: [
      { actions: [write('a.txt', 'one\n'), write('sub/b.txt', 'b\n')] },
      { actions: [write('a.txt', 'one\ntwo\n')] },
    ],
    review: [verdict('REQUEST_CHANGES', 'Add "two".'), verdict('ACCEPT', 'ok')],
  });
  const r = fx.run(['job', 'do', '--title', 'two iterations'], s);
  expect(r.code, r.stderr).toBe(0);
  jobId = jobIdFrom(r.stderr);
  job = JSON.parse(fx.run(['job', 'show', jobId, '--json']).stdout) as Job;
}, 300_000);
afterAll(() => fx.tmp.cleanup());

const diffJson = (...args: string[]) => {
  const r = fx.run(['job', 'diff', jobId, ...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as LoadedIterationDiff;
};

describe('iteration-history.md, Decision › 4 "Enhanced IterationEntry": each entry has its own id', () => {
  it('every iteration has a stable id of its own, in ii job show and its --json', () => {
    const ids = commits().map((c) => c.id);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(2);
    // Stable: the commit stage rewrote the accepted iteration's commit, not its id.
    const accepted = commits()[1]!;
    expect(accepted.iteration_commit_id).not.toBeNull();
    const text = fx.run(['job', 'show', jobId]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`iteration 1 .* id: ${ids[0]}\n`));
    expect(text.stdout).toMatch(new RegExp(`iteration 2 .* id: ${ids[1]}\n`));
  });

  it('ii job diff --from/--to take an id, or a unique prefix, as well as change.iteration', () => {
    const [a, b] = commits().map((c) => c.id);
    const byPos = diffJson('--from', '1.1', '--to', '1.2');
    const byId = diffJson('--from', a!, '--to', b!);
    const byPrefix = diffJson('--from', a!.slice(0, 6), '--to', b!.toUpperCase());
    for (const d of [byId, byPrefix]) {
      expect(d.from_iteration).toEqual({ change: 1, iteration: 1 });
      expect(d.iteration).toBe(2);
      expect(d.diff).toBe(byPos.diff);
      expect(d.files_modified).toEqual(['a.txt']);
    }
    // The spec's IterationDiff.iterationId and previousIterationId.
    expect(byId.iteration_id).toBe(b);
    expect(byId.previous_iteration_id).toBe(a);
    const unknown = fx.run(['job', 'diff', jobId, '--from', 'abcdef012345']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain(`job ${jobId} has no iteration with id 'abcdef012345' (--from)`);
  });
});

describe('iteration-history.md, Decision › 1 step 5 and Architecture "completeIteration": the diff summary is stored', () => {
  it('each iteration ends with its diff summary stored, which ii job diff reads', () => {
    for (const c of commits()) expect(c.diff_summary).toMatch(/^Change 1, iteration \d; /);
    expect(commits()[0]!.diff_summary).toContain('2 files added, 0 modified, 0 removed');
    expect(commits()[0]!.diff_summary).toContain('REQUEST_CHANGES');
    const last = diffJson();
    expect(last.summary_stored).toBe(true);
    expect(last.summary).toBe(commits()[1]!.diff_summary);
    const first = diffJson('--iteration', '1');
    expect(first.summary_stored).toBe(true);
    expect(first.summary).toBe(commits()[0]!.diff_summary);
    // Recomputed from the same facts, it says the same.
    const again = diffJson('--iteration', '1', '--recompute');
    expect(again.summary_stored).toBe(false);
    expect(again.summary).toBe(first.summary);
  });

  it('reads the stored summary, recomputes only with --recompute, and computes one an older record lacks', () => {
    const db = new DatabaseSync(dbPath());
    const set = (v: string | null) =>
      db
        .prepare(
          'UPDATE commits SET diff_summary = ?, list_json = NULL WHERE job_id = ? AND change_seq = 1 AND seq = 1',
        )
        .run(v, jobId);
    try {
      set('what was stored when it ended');
      expect(diffJson('--iteration', '1').summary).toBe('what was stored when it ended');
      const text = fx.run(['job', 'diff', jobId, '--iteration', '1']);
      expect(text.stdout).toContain('summary:  what was stored when it ended');
      expect(text.stdout).not.toContain('(computed now)');
      const recomputed = diffJson('--iteration', '1', '--recompute');
      expect(recomputed.summary).toContain('Change 1, iteration 1; 2 files added');
      expect(recomputed.summary_stored).toBe(false);
      // An older record, with none stored: computed, and said so.
      set(null);
      const old = diffJson('--iteration', '1');
      expect(old.summary_stored).toBe(false);
      expect(old.summary).toBe(recomputed.summary);
      expect(fx.run(['job', 'diff', jobId, '--iteration', '1']).stdout).toContain('(computed now)');
    } finally {
      set(commits()[0]!.diff_summary);
      db.close();
    }
  });

  it('--help names --recompute', () => {
    const help = fx.run(['job', 'diff', '--help']);
    expect(help.stdout).toContain('--recompute');
  });
});

describe('file-tracking.md, Technical Implementation › Data Structures: FileChange carries AbsPath', () => {
  it("the job's files and the tracker's live reports have abs_path beside the relative path", () => {
    const ws = job.workspace_path!;
    expect(ws).toBeTruthy();
    const files = commits()[0]!.files;
    expect(files.map((f) => [f.path, f.abs_path])).toEqual([
      ['a.txt', join(ws, 'a.txt')],
      ['sub/b.txt', join(ws, 'sub/b.txt')],
    ]);
    const events = readFileSync(
      join(fx.tmp.path, 'state', 'incrementum', 'jobs', jobId, 'events.jsonl'),
      'utf8',
    )
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; path?: string; abs_path?: string });
    const tracked = events.filter((e) => e.type === 'file_change');
    expect(tracked.length).toBeGreaterThan(0);
    for (const e of tracked) expect(e.abs_path).toBe(join(ws, e.path!));
  });
});
