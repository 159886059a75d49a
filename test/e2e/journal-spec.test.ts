// A real job's journal.json read by a program written against the journal-v2
// spec's final schema (test/fixtures/journal/spec-schema.ts, transcribed from
// the spec, not from our schema): it must parse unchanged and say what the
// job did, a retried job included.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';
import { SpecJournal } from '../fixtures/journal/spec-schema.js';

let jf: JobFixture | null = null;
afterEach(() => {
  jf?.cleanup();
  jf = null;
});

it("a real job's journal.json reads as the spec's JournalJson", () => {
  jf = new JobFixture('ii-jspec-');
  // The test checks the agent's work, so it fails on the untouched base: no baseline run.
  jf.setup(['test -f hello.txt || { echo hello.txt is missing; exit 4; }'], {
    job: 'baseline-tests = false\n',
  });
  const s = jf.scenario('spec', {
    implement: [{ actions: [write('other.txt', 'x\n')] }, { actions: [write('hello.txt', 'hi\n')] }],
    review: [verdict('ACCEPT', 'Good.')],
    'commit-message': [{ actions: [{ type: 'commit_message', text: 'Add hello.txt' }] }],
  });
  const r = jf.run(['job', 'do', '--title', 'say hello'], s);
  expect(r.code, r.stderr).toBe(0);
  const id = jobIdFrom(r.stderr);
  const job = jf.show(id);
  const out = jf.run(['job', 'journal', id, '--json']);
  expect(out.code, out.stderr).toBe(0);

  // The file on disk, as a program would read it.
  const path = join(jf.env.XDG_STATE_HOME!, 'incrementum', 'jobs', id, 'journal.json');
  const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const parsed = SpecJournal.safeParse(raw);
  expect(parsed.error?.issues ?? []).toEqual([]);
  const j = parsed.data!;
  expect(j).toMatchObject({
    schema_version: '1.0',
    run_id: id,
    base_sha: job.base_rev,
    task: { path: null, title: 'say hello' },
    status: { terminal_state: 'complete', timestamps: { ended_at: expect.any(String) } },
    milestones: { attempted: 1, total: 1, verified: 1 },
    resumed_from: null,
    extraction: { checkpoints: 'git_log_v1', verification: 'timeline_v1', next_action: 'derived' },
  });
  const final = job.changes[0]!.commits.at(-1)!.commit_id;
  expect(j.head_sha).toBe(final);
  expect(j.checkpoints).toEqual({
    created: 1,
    list: [{ milestone_index: 0, title: 'Add hello.txt', sha: final, created_at: expect.any(String) }],
    last_sha: final,
  });
  expect(j.verification.summary).toMatchObject({ attempts_total: 2, attempts_passed: 1, attempts_failed: 1 });
  expect(j.verification.last_failure).toMatchObject({ exit_code: 4, error_excerpt: 'hello.txt is missing' });
  expect(j.changes).toMatchObject({ base_sha: job.base_rev, head_sha: final, files_changed: 2 });
  expect(j.notes.count).toBe(0);
  expect(j.warnings).toEqual([]);
  // Fixes Applied 9: whole seconds (Math.round), not 2.779.
  expect(Number.isInteger(j.status.duration_seconds)).toBe(true);

  // A retry resumes from the first job, at the commit it starts from.
  const again = jf.run(['job', 'retry', id], s);
  const retryId = jobIdFrom(again.stderr);
  expect(retryId).not.toBe('');
  const rj = SpecJournal.parse(JSON.parse(jf.run(['job', 'journal', retryId, '--json']).stdout));
  expect(rj.resumed_from).toEqual({ run_id: id, checkpoint_sha: jf.show(retryId).base_rev });
});
