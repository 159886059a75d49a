// The job change tracking spec (../shared/specs/job-change-tracking.md),
// section by section, on real jobs: the built CLI, real git, the scripted
// ACP agent. Each test names the section it checks.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { delay, JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';
import { runningIn } from '../helpers/procs.js';
import { waitFor } from '../helpers/tmp.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-chspec-');
});
afterEach(() => f.cleanup());

const CHANGE_REFS = 'refs/incrementum/changes/';

/** The change ids named under refs/incrementum/changes/. */
const refChanges = (): Set<string> =>
  new Set(
    f
      .git('for-each-ref', '--format=%(refname)', CHANGE_REFS)
      .split('\n')
      .filter(Boolean)
      .map((r) => r.slice(CHANGE_REFS.length).split('/')[0]!),
  );

interface ListedJob {
  id: string;
  changes: { change_id: string; commits: unknown[] }[];
}

describe('job-change-tracking.md, State Transitions / Implementing Stage', () => {
  it('spec Implementing Stage: entering implementing records the change (its Change-Id, no commits); abandoned before its first commit, the record keeps it', async () => {
    f.setup(['true']);
    const s = f.scenario('slow', { implement: [delay(60_000)] });
    const job = f.spawn(['job', 'do', '--title', 'slow start'], s);
    const id = await waitFor(() => jobIdFrom(job.stderr()), 'the job id');
    const printed = await waitFor(() => /change: +(I[0-9a-f]{40})/.exec(job.stderr())?.[1], 'the change id');
    // While the first implement pass runs, its change is on the record.
    const during = await waitFor(() => {
      const j = f.show(id);
      return j.stage === 'implementing' && j.changes.length === 1 ? j : null;
    }, 'the change on the record while implementing');
    expect(during.changes[0]).toMatchObject({ change_id: printed, commits: [] });
    // Its refs are made with it (spec Housekeeping: a ref names a recorded
    // change), just after it is recorded, so prune never meets a ref of no one's.
    const base = await waitFor(() => {
      try {
        return f.git('rev-parse', `${CHANGE_REFS}${printed}/base`).trim();
      } catch {
        return null;
      }
    }, 'the change base ref');
    expect(base).toBe(during.base_rev);
    const shown = f.run(['job', 'show', id]).stdout;
    expect(shown).toContain(printed);
    expect(shown).toContain('no iteration yet');
    expect(shown).not.toContain('none yet');

    expect(f.run(['job', 'abandon', id, '--reason', 'not needed']).code).toBe(0);
    await job.exit;
    await waitFor(() => runningIn(f.tmp.path).length === 0, 'no process of the job left');
    const after = f.show(id);
    expect(after.status).toBe('abandoned');
    expect(after.changes).toEqual([expect.objectContaining({ change_id: printed, commits: [] })]);
    // Every view takes a change with no commit.
    expect(f.run(['job', 'show', id]).stdout).toContain('no commit: the job ended before its first');
    const listed = JSON.parse(f.run(['job', 'list', '--json', '--all']).stdout) as ListedJob[];
    expect(listed.find((j) => j.id === id)?.changes).toEqual([
      expect.objectContaining({ change_id: printed, commits: [] }),
    ]);
    const journal = f.run(['job', 'journal', id, '--json']);
    expect(journal.code, journal.stderr).toBe(0);
    expect(JSON.parse(journal.stdout)).toMatchObject({ milestones: { attempted: 0, total: 1, verified: 0 } });
    expect(refChanges()).toEqual(new Set([printed]));
  });

  it('spec Implementing Stage: an agent that crashes before the first commit leaves the change on the record', () => {
    f.setup();
    const s = f.scenario('crash', {
      implement: [{ actions: [write('a.txt', 'a\n'), { type: 'crash', code: 7 }] }],
    });
    const r = f.run(['job', 'do', '--title', 'crash'], s);
    expect(r.code).toBe(1);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    const printed = /change: +(I[0-9a-f]{40})/.exec(r.stderr)?.[1];
    expect(job.changes).toEqual([expect.objectContaining({ change_id: printed, commits: [] })]);
  });

  it('spec Implementing Stage (no changes detected → project review): after the project review requests changes, an empty pass goes to the project review again', () => {
    f.setup(['true']);
    const s = f.scenario('project-rc-empty', {
      implement: [{ actions: [write('a.txt', 'a\n')] }, { actions: [] }, { actions: [] }],
      'project-review': [
        verdict('REQUEST_CHANGES', 'Maybe document it?'),
        verdict('ACCEPT', 'Fine as it is.'),
      ],
    });
    const r = f.run(['job', 'do', '--title', 'a'], s);
    expect(r.code, r.stderr).toBe(0);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('completed');
    expect(job.project_review?.outcome).toBe('ACCEPT');
    expect(job.agent_sessions.map((a) => a.purpose)).toEqual([
      'implement',
      'review',
      'commit-message',
      'implement',
      'project-review',
      'implement',
      'project-review',
    ]);
    // The requested work would have gone into the change the empty pass
    // left; the pass after the request changed nothing either.
    expect(job.changes.map((c) => c.commits.length)).toEqual([1, 0]);
  });

  it('spec Implementing Stage: a project review that keeps asking while the passes change nothing stops at max-iterations', () => {
    f.setup(['true'], { job: 'max-iterations = 1\n' });
    const rc = verdict('REQUEST_CHANGES', 'Do more.');
    const s = f.scenario('project-rc-forever', { 'project-review': [rc, rc, rc] });
    const r = f.run(['job', 'do', '--title', 'nothing to do'], s);
    expect(r.code).toBe(1);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.failure_reason).toMatch(
      /project review requested changes 2 times, but no implement pass after it changed anything.*max-iterations = 1/,
    );
    // One answer to the request was allowed (max-iterations = 1).
    expect(job.agent_sessions.filter((a) => a.purpose === 'project-review')).toHaveLength(2);
    expect(job.changes.map((c) => c.commits.length)).toEqual([0]);
  });

  it('spec Implementing Stage, the case it leaves open: an empty pass in a change its review rejected is tested and reviewed again as it stands', () => {
    // max-iterations = 3: the old loop (implementing again with the same
    // feedback) fails the job quickly instead of running 8 passes.
    f.setup(['true'], { job: 'max-iterations = 3\n' });
    const s = f.scenario('rc-empty', {
      implement: [{ actions: [write('a.txt', 'a\n')] }, { actions: [] }, { actions: [] }],
      review: [verdict('REQUEST_CHANGES', 'Are you sure?'), verdict('ACCEPT', 'Yes, it is right.')],
    });
    const r = f.run(['job', 'do', '--title', 'a'], s);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('tested and reviewed again as it stands');
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('completed');
    const [first, second] = job.changes[0]!.commits;
    expect(first!.review?.outcome).toBe('REQUEST_CHANGES');
    // The second iteration is the same tree, tested and accepted.
    expect(second!.feedback).toContain('Are you sure?');
    expect(second!.tests_passed).toBe(true);
    expect(second!.review?.outcome).toBe('ACCEPT');
    expect(f.git('rev-parse', `${first!.commit_id}^{tree}`)).toBe(
      f.git('rev-parse', `${second!.commit_id}^{tree}`),
    );
  });
});

describe('job-subcommand.md, Job Model (stage) and journal-v2.md (status.phase)', () => {
  it('spec Job Model stage names: a completed job ended in the reviewing stage, and its journal says the same', () => {
    f.setup(['true']);
    const s = f.scenario('one', { implement: [{ actions: [write('a.txt', 'a\n')] }] });
    const r = f.run(['job', 'do', '--title', 'a'], s);
    expect(r.code, r.stderr).toBe(0);
    const id = jobIdFrom(r.stderr);
    const job = f.show(id);
    expect(job.status).toBe('completed');
    expect(job.stage).toBe('reviewing');
    const journal = JSON.parse(f.run(['job', 'journal', id, '--json']).stdout) as {
      status: { phase: string; terminal_state: string };
    };
    expect(journal.status).toMatchObject({ phase: job.stage, terminal_state: 'complete' });
  });
});

describe('refs/incrementum/changes: only changes a record holds', () => {
  it('spec Implementing Stage: a job with two changes leaves refs of recorded changes only', () => {
    f.setup(['true']);
    const s = f.scenario('two', {
      implement: [{ actions: [write('a.txt', 'a\n')] }, { actions: [write('b.txt', 'b\n')] }],
    });
    const r = f.run(['job', 'do', '--title', 'a then b'], s);
    expect(r.code, r.stderr).toBe(0);
    const job = f.show(jobIdFrom(r.stderr));
    const recorded = new Set(job.changes.map((c) => c.change_id));
    expect([...refChanges()].filter((id) => !recorded.has(id))).toEqual([]);
  });

  it('ii workspace prune removes the refs of changes no job records, and keeps every recorded one', () => {
    f.setup(['true']);
    const s = f.scenario('one', { implement: [{ actions: [write('a.txt', 'a\n')] }] });
    const r = f.run(['job', 'do', '--title', 'a'], s);
    expect(r.code, r.stderr).toBe(0);
    const job = f.show(jobIdFrom(r.stderr));
    // Refs an older runner left: a reserved change's base, and one with an iteration.
    const strays = [`I${'a'.repeat(40)}`, `I${'b'.repeat(40)}`];
    f.git('update-ref', `${CHANGE_REFS}${strays[0]}/base`, 'HEAD');
    f.git('update-ref', `${CHANGE_REFS}${strays[1]}/base`, 'HEAD');
    f.git('update-ref', `${CHANGE_REFS}${strays[1]}/1`, 'HEAD');
    const before = f.git('for-each-ref', '--format=%(refname) %(objectname)', CHANGE_REFS);
    const p = f.run(['workspace', 'prune']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toContain('Removed the refs of 2 changes no job records');
    const after = f.git('for-each-ref', '--format=%(refname) %(objectname)', CHANGE_REFS);
    expect(after).not.toMatch(/I(a{40}|b{40})/);
    // What was not a stray is still there, unchanged.
    expect(after).toBe(
      before
        .split('\n')
        .filter((l) => !/I(a{40}|b{40})/.test(l))
        .join('\n'),
    );
    expect(refChanges()).toEqual(new Set(job.changes.map((c) => c.change_id)));
    expect(f.run(['job', 'diff', job.id]).code).toBe(0);
    // Nothing left to prune the second time.
    expect(f.run(['workspace', 'prune']).stdout).not.toContain('refs of');
  });
});
