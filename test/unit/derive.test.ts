import { describe, expect, it } from 'vitest';
import {
  changeColumn,
  changeWord,
  commitColumn,
  commitOutcome,
  currentChange,
  currentCommit,
  isChangeComplete,
  iterationCount,
  lastCommit,
  latestCommit,
  jobColumn,
  isStale,
  changeCountLabel,
  iterationLabel,
} from '../../src/model/derive.js';
import { Job, JobChange, JobCommit, type JobReview } from '../../src/model/job.js';

const T = '2026-11-22T00:00:00.000Z';
const review = (outcome: JobReview['outcome']): JobReview => ({
  outcome,
  comments: '',
  agent_session_id: null,
  reviewed_at: T,
});
const commit = (over: Partial<JobCommit> = {}): JobCommit =>
  JobCommit.parse({ commit_id: 'c', created_at: T, ...over });
const change = (commits: JobCommit[]): JobChange =>
  JobChange.parse({ change_id: 'I1', created_at: T, commits });
const job = (over: Partial<Job> = {}): Job =>
  Job.parse({ id: 'j', repo: 'r', todo_id: 't', started_at: T, updated_at: T, ...over });

describe('current change and commit', () => {
  it('a legacy job with no changes has none, and no iterations', () => {
    const j = job();
    expect(currentChange(j)).toBeNull();
    expect(currentCommit(j)).toBeNull();
    expect(iterationCount(currentChange(j))).toBe(0);
  });
  it('the last change and its last commit are current', () => {
    const a = commit({ commit_id: 'a' });
    const b = commit({ commit_id: 'b' });
    const j = job({ changes: [change([a]), { ...change([a, b]), change_id: 'I2' }] });
    expect(currentChange(j)?.change_id).toBe('I2');
    expect(currentCommit(j)?.commit_id).toBe('b');
    expect(iterationCount(currentChange(j))).toBe(2);
  });
  // job-change-tracking.md, "Deriving State": CurrentChange() is nil once the
  // last change is complete; CurrentCommit() is the current change's last commit.
  it('spec Deriving State / Current Change: none once the last change is complete', () => {
    const accepted = commit({ commit_id: 'a', tests_passed: true, review: review('ACCEPT') });
    const j = job({ changes: [change([accepted])] });
    expect(currentChange(j)).toBeNull();
    expect(currentCommit(j)).toBeNull();
    expect(lastCommit(j)?.commit_id).toBe('a'); // what the commit stage still writes to
    expect(latestCommit(j)?.commit_id).toBe('a');
  });
  it('spec Deriving State / Current Change: no commits, no review, or not accepted are current', () => {
    const fresh = job({ changes: [change([])] });
    expect(currentChange(fresh)?.change_id).toBe('I1');
    expect(currentCommit(fresh)).toBeNull();
    for (const last of [
      commit(),
      commit({ review: review('REQUEST_CHANGES') }),
      commit({ review: review('ABANDON') }),
    ])
      expect(currentCommit(job({ changes: [change([last])] }))).toEqual(last);
    // A new change with no commit after an accepted one: current, and the
    // newest commit is still the accepted one.
    const next = job({
      changes: [
        change([commit({ commit_id: 'a', review: review('ACCEPT') })]),
        { ...change([]), change_id: 'I2' },
      ],
    });
    expect(currentChange(next)?.change_id).toBe('I2');
    expect(lastCommit(next)).toBeNull();
    expect(latestCommit(next)?.commit_id).toBe('a');
  });
  it('a change is complete only when its last review accepts', () => {
    expect(isChangeComplete(change([]))).toBe(false);
    expect(isChangeComplete(change([commit({ review: review('ACCEPT') })]))).toBe(true);
    expect(isChangeComplete(change([commit({ review: review('ACCEPT') }), commit()]))).toBe(false);
    expect(isChangeComplete(change([commit({ review: review('REQUEST_CHANGES') })]))).toBe(false);
  });
});

describe('job column', () => {
  it.each([
    ['implementing', 'Implementing'],
    ['testing', 'Testing'],
    ['reviewing', 'Reviewing'],
    ['committing', 'Committing'],
  ] as const)('active in %s → %s', (stage, col) => {
    expect(jobColumn(job({ stage }))).toBe(col);
  });
  it.each([
    ['completed', 'Completed'],
    ['failed', 'Failed'],
    ['abandoned', 'Abandoned'],
  ] as const)('%s → %s whatever the stage', (status, col) => {
    expect(jobColumn(job({ status, stage: 'testing' }))).toBe(col);
  });
});

describe('change column precedence', () => {
  const active = job();
  it('no commit yet → Implementing', () => expect(changeColumn(change([]), active)).toBe('Implementing'));
  it('untested commit → Testing', () => expect(changeColumn(change([commit()]), active)).toBe('Testing'));
  it('failed tests → Implementing', () =>
    expect(changeColumn(change([commit({ tests_passed: false })]), active)).toBe('Implementing'));
  it('passed, unreviewed → Reviewing', () =>
    expect(changeColumn(change([commit({ tests_passed: true })]), active)).toBe('Reviewing'));
  it('REQUEST_CHANGES → Implementing', () =>
    expect(
      changeColumn(change([commit({ tests_passed: true, review: review('REQUEST_CHANGES') })]), active),
    ).toBe('Implementing'));
  it('ACCEPT → Committed, even once the job finished', () => {
    const c = change([commit({ tests_passed: true, review: review('ACCEPT') })]);
    expect(changeColumn(c, active)).toBe('Committed');
    expect(changeColumn(c, job({ status: 'failed' }))).toBe('Committed');
  });
  it('ABANDON → Abandoned', () =>
    expect(changeColumn(change([commit({ tests_passed: true, review: review('ABANDON') })]), active)).toBe(
      'Abandoned',
    ));
  it.each(['abandoned', 'completed'] as const)('unfinished change of a %s job → Abandoned', (status) => {
    expect(changeColumn(change([]), job({ status }))).toBe('Abandoned');
    expect(changeColumn(change([commit()]), job({ status }))).toBe('Abandoned');
  });
  it('unfinished change of a failed job → Failed, not Abandoned: nobody gave it up', () => {
    const failed = job({ status: 'failed' });
    expect(changeColumn(change([]), failed)).toBe('Failed');
    expect(changeColumn(change([commit({ tests_passed: true })]), failed)).toBe('Failed');
    expect(changeColumn(change([commit({ tests_passed: true, review: review('ABANDON') })]), failed)).toBe(
      'Abandoned',
    );
  });
});

describe('change word, for a line of text', () => {
  it.each(['completed', 'abandoned', 'failed'] as const)(
    "a %s job's change with no commit is Empty, not Abandoned: nobody gave it up",
    (status) => expect(changeWord(change([]), job({ status }))).toBe('Empty'),
  );
  it('otherwise the column', () => {
    expect(changeWord(change([]), job())).toBe('Implementing');
    expect(changeWord(change([commit()]), job({ status: 'abandoned' }))).toBe('Abandoned');
    expect(
      changeWord(
        change([commit({ tests_passed: true, review: review('ACCEPT') })]),
        job({ status: 'completed' }),
      ),
    ).toBe('Committed');
  });
});

describe('commit column precedence', () => {
  const testing = job({ stage: 'testing' });
  const cur = { isCurrent: true, job: testing };
  it('ACCEPT → Accepted', () =>
    expect(commitColumn(commit({ tests_passed: true, review: review('ACCEPT') }), cur)).toBe('Accepted'));
  it('REQUEST_CHANGES → Rejected', () =>
    expect(commitColumn(commit({ tests_passed: true, review: review('REQUEST_CHANGES') }), cur)).toBe(
      'Rejected',
    ));
  it('ABANDON → Rejected', () =>
    expect(commitColumn(commit({ review: review('ABANDON') }), cur)).toBe('Rejected'));
  it('failed tests → Rejected', () =>
    expect(commitColumn(commit({ tests_passed: false }), cur)).toBe('Rejected'));
  it('untested current commit while testing → Testing', () =>
    expect(commitColumn(commit(), cur)).toBe('Testing'));
  it('untested commit otherwise → Draft', () => {
    expect(commitColumn(commit(), { isCurrent: false, job: testing })).toBe('Draft');
    expect(commitColumn(commit(), { isCurrent: true, job: job({ stage: 'implementing' }) })).toBe('Draft');
    expect(
      commitColumn(commit(), { isCurrent: true, job: job({ stage: 'testing', status: 'failed' }) }),
    ).toBe('Draft');
  });
  it('passed, unreviewed → Reviewing', () =>
    expect(commitColumn(commit({ tests_passed: true }), cur)).toBe('Reviewing'));
});

describe('commit outcome, as every view words it', () => {
  it("says the review's verdict first, else what the tests said", () => {
    expect(commitOutcome(commit({ review: review('ACCEPT'), tests_passed: true }))).toBe('review ACCEPT');
    expect(commitOutcome(commit({ review: review('REQUEST_CHANGES') }))).toBe('review REQUEST_CHANGES');
    expect(commitOutcome(commit({ tests_passed: false }))).toBe('tests failed');
    expect(commitOutcome(commit({ tests_passed: true }))).toBe('tests passed');
    expect(commitOutcome(commit())).toBe('not tested');
  });
});

describe('stale', () => {
  const probe = (alive: boolean) => ({ host: 'h', pidAlive: () => alive });
  it('finished jobs are never stale', () =>
    expect(isStale(job({ status: 'completed' }), Date.now(), probe(false))).toBe(false));
  it('same host: decided by the pid', () => {
    const j = job({ host: 'h', pid: 1 });
    expect(isStale(j, Date.now(), probe(true))).toBe(false);
    expect(isStale(j, Date.now(), probe(false))).toBe(true);
  });
  it('other host: decided by the heartbeat age', () => {
    const j = job({ host: 'other', pid: 1, heartbeat_at: T });
    expect(isStale(j, Date.parse(T) + 1000, probe(true))).toBe(false);
    expect(isStale(j, Date.parse(T) + 60_000, probe(true))).toBe(true);
  });
});

describe('job list counts (CHANGES, ITERATION)', () => {
  const session = { purpose: 'implement' as const, id: 'a', transcript: '/t' };
  it('a new job with no change yet: 0 changes, iteration 1', () => {
    const j = job();
    expect([changeCountLabel(j), iterationLabel(j)]).toEqual(['0', '1']);
  });
  it('an open change: its iterations; a complete one: iteration 1 of the next', () => {
    const open = job({ changes: [change([commit(), commit({ review: review('REQUEST_CHANGES') })])] });
    expect([changeCountLabel(open), iterationLabel(open)]).toEqual(['1', '2']);
    const done = job({ changes: [change([commit({ review: review('ACCEPT') })])] });
    expect([changeCountLabel(done), iterationLabel(done)]).toEqual(['1', '1']);
  });
  it('a finished job: its last change\'s iterations, or "-" with none', () => {
    const two = job({
      status: 'completed',
      changes: [change([commit(), commit(), commit({ review: review('ACCEPT') })])],
    });
    expect([changeCountLabel(two), iterationLabel(two)]).toEqual(['1', '3']);
    const none = job({ status: 'failed', agent_sessions: [session] });
    expect([changeCountLabel(none), iterationLabel(none)]).toEqual(['0', '-']);
    const reviewed = job({ status: 'completed', project_review: review('ACCEPT') });
    expect(changeCountLabel(reviewed)).toBe('0');
  });
  it('a finished record with nothing to say of changes: N/A', () => {
    const legacy = job({ status: 'failed' });
    expect([changeCountLabel(legacy), iterationLabel(legacy)]).toEqual(['N/A', 'N/A']);
  });
});
