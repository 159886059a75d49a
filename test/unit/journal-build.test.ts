import { describe, expect, it } from 'vitest';
import { buildJournal } from '../../src/journal/build.js';
import { Journal } from '../../src/journal/schema.js';
import { acceptedHead } from '../../src/journal/sections.js';
import { JobEvent } from '../../src/model/event.js';
import { Job } from '../../src/model/job.js';
import {
  BASE,
  HEAD1,
  HEAD2,
  fixtureEvents,
  fixtureGit,
  fixtureInputs,
  fixtureJob,
} from '../helpers/journal-fixture.js';

const build = (over: Parameters<typeof fixtureInputs>[0] = {}) => {
  const j = buildJournal(fixtureInputs(over));
  Journal.parse(j); // every journal the builder makes satisfies its own schema
  return j;
};

describe('journal sections of a finished job', () => {
  const j = build();

  it('header and identity', () => {
    expect(j).toMatchObject({
      schema_version: '1.0',
      generated_by: 'incrementum 0.1.0',
      generated_at: '2026-01-02T11:00:00.000Z',
      run_id: 'job12345',
      repo: 'demo-1a2b3c4d',
      repo_root: '/src/demo',
      base_sha: BASE,
      head_sha: HEAD2,
    });
    expect(j.task).toEqual({
      path: null,
      // sha256("Print each step.")
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      title: 'Add a --verbose flag',
      goal: 'Print each step.',
      todo_id: 'todo0001',
    });
    expect(j.sources.identity).toBe('job record + events (last commit stage)');
  });

  // job-subcommand.md, "Job Model": the stage is implementing, testing,
  // reviewing or committing; the project review is the reviewing stage.
  it("status: duration from the stored times, phase the record's stage (spec Job Model stage names)", () => {
    expect(j.status).toEqual({
      phase: 'reviewing',
      job_status: 'completed',
      terminal_state: 'complete',
      stop_reason: null,
      timestamps: { started_at: '2026-01-02T10:00:00.000Z', ended_at: '2026-01-02T10:12:30.000Z' },
      duration_seconds: 750,
      landed: null,
      waited_seconds: 0,
      working_seconds: 750,
    });
  });

  it('milestones: changes attempted, total, verified', () => {
    expect(j.milestones).toEqual({ attempted: 2, total: 2, verified: 2, accepted: 2, iterations: 3 });
  });

  it('checkpoints: the accepted commits with committer time as ISO', () => {
    expect(j.checkpoints).toEqual({
      created: 2,
      list: [
        {
          milestone_index: 0,
          sha: HEAD1,
          created_at: '2026-01-02T10:05:00.000Z',
          title: 'feat: add --verbose',
        },
        {
          milestone_index: 1,
          sha: HEAD2,
          created_at: '2026-01-02T10:08:00.000Z',
          title: 'docs: mention --verbose',
        },
      ],
      last_sha: HEAD2,
    });
    expect(j.sources.checkpoints).toBe('git log base..head');
    expect(j.extraction).toEqual({
      checkpoints: 'git_log_v1',
      verification: 'timeline_v1',
      next_action: 'derived',
    });
  });

  it('verification counts test runs, not commands, and excerpts the last failure, redacted', () => {
    const v = j.verification;
    expect(v.summary).toEqual({
      attempts_total: 3,
      attempts_passed: 2,
      attempts_failed: 1,
      total_duration_seconds: 12,
    });
    expect(v.last_failure).toMatchObject({
      command: 'npm test',
      exit_code: 1,
      log_path: '/state/incrementum/jobs/job12345/events.jsonl',
    });
    expect(v.last_failure!.error_excerpt).toBe(
      'running 3 tests\nFAIL adds numbers\n  expected 3 to be 4\nenv OPENAI_API_KEY=[REDACTED]',
    );
    expect(j.sources.last_failure).toBe('events');
  });

  it('changes: totals, top files by size, the diff stat', () => {
    expect(j.changes).toMatchObject({ files_changed: 3, insertions: 24, deletions: 3 });
    expect(j.changes).toMatchObject({ base_sha: BASE, head_sha: HEAD2 });
    expect(j.changes.top_files!.map((f) => f.path)).toEqual(['src/cli.ts', 'README.md', 'assets/logo.png']);
    expect(j.changes.diff_stat).toContain('3 files changed');
  });

  it('next action derived from a complete job: review the accepted range', () => {
    expect(j.next_action).toEqual({
      title: 'Review the accepted commits and merge them',
      command: `git log --stat ${BASE.slice(0, 12)}..${HEAD2.slice(0, 12)}`,
      why: 'the project review accepted the job',
    });
    expect(j.sources.next_action).toBe('derived from the status');
  });

  it('notes, resumed_from, usage per stage and total', () => {
    expect(j.notes).toEqual({
      count: 1,
      path: '/state/incrementum/jobs/job12345/notes.jsonl',
      recent: [{ ts: '2026-01-02T10:13:00.000Z', text: 'merged by hand' }],
    });
    expect(j.resumed_from).toBeNull();
    expect(j.sources.resumed_from).toBe('none');
    expect(j.usage.by_stage).toEqual({
      implement: { input_tokens: 8000, output_tokens: 3000, cost: 0.3, sessions: 2 },
      review: { input_tokens: 2000, output_tokens: 200, cost: 0.06, sessions: 1 },
    });
    expect(j.usage.total).toEqual({ input_tokens: 12000, output_tokens: 3400, cost: 0.42 });
    expect(j.usage.unattributed).toEqual({ input_tokens: 2000, output_tokens: 200, cost: 0.06 });
    expect(j.sources.usage).toBe('job record (3 of 4 agent sessions recorded their own usage)');
  });

  it('no warnings when every input is there', () => {
    expect(j.warnings).toEqual([]);
  });
});

describe('journal status and next action by outcome', () => {
  it('a failed job: stopped, its reason, retry next', () => {
    const j = build({
      job: fixtureJob({ status: 'failed', failure_reason: 'the implement agent failed: boom' }),
    });
    expect(j.status).toMatchObject({
      terminal_state: 'stopped',
      stop_reason: 'the implement agent failed: boom',
    });
    expect(j.next_action).toEqual({
      title: 'Retry the job',
      command: 'ii job retry job12345',
      why: 'the job failed: the implement agent failed: boom',
    });
  });

  it('an abandoned job points at the todo', () => {
    const j = build({ job: fixtureJob({ status: 'abandoned', failure_reason: 'abandoned on request' }) });
    expect(j.status.terminal_state).toBe('stopped');
    expect(j.next_action?.command).toBe('ii todo show todo0001');
  });

  it('a running job: no end, no duration (never measured from now), watch it', () => {
    const j = build({ job: fixtureJob({ status: 'active', stage: 'testing', completed_at: null }) });
    expect(j.status).toMatchObject({
      terminal_state: 'running',
      phase: 'testing',
      timestamps: { started_at: expect.any(String), ended_at: null },
      duration_seconds: null,
    });
    expect(j.next_action).toMatchObject({ title: 'Watch the job', command: 'ii job show job12345' });
    expect(j.warnings).toEqual([]);
  });

  it('a running job whose runner is gone: unknown, retry it', () => {
    const j = build({
      job: fixtureJob({ status: 'active', completed_at: null, pid: 4242, host: 'box', heartbeat_at: null }),
      stale: true,
    });
    expect(j.status.terminal_state).toBe('unknown');
    expect(j.status.stop_reason).toContain('the runner is gone (pid 4242 on box');
    expect(j.next_action?.command).toBe('ii job retry job12345');
  });

  it('a retried job says where it resumed from', () => {
    const j = build({ job: fixtureJob({ retried_from: 'oldjob01' }) });
    expect(j.resumed_from).toEqual({ run_id: 'oldjob01', checkpoint_sha: BASE });
    expect(j.sources.resumed_from).toBe('job record');
  });

  it('a finished job without a completion time: duration null and a warning', () => {
    const j = build({ job: fixtureJob({ completed_at: null }) });
    expect(j.status.duration_seconds).toBeNull();
    expect(j.warnings.join('\n')).toContain('no completion time');
  });
});

describe('the stop file', () => {
  it('its next action wins over the derived one, and its reason fills a missing stop reason', () => {
    const j = build({
      job: fixtureJob({ status: 'failed', failure_reason: null }),
      stop: {
        state: 'ok',
        value: {
          reason: 'needs a human decision',
          next_action: {
            title: 'Pick a strategy',
            command: 'ii job retry job12345',
            why: 'both are sketched',
          },
        },
      },
    });
    expect(j.status.stop_reason).toBe('needs a human decision');
    expect(j.sources.status).toBe('job record + stop file');
    expect(j.next_action).toEqual({
      title: 'Pick a strategy',
      command: 'ii job retry job12345',
      why: 'both are sketched',
    });
    expect(j.sources.next_action).toBe('stop file');
  });

  it('an unreadable stop file is ignored with a warning', () => {
    const j = build({ stop: { state: 'error', error: 'not JSON (Unexpected end)' } });
    expect(j.sources.next_action).toBe('derived from the status');
    expect(j.warnings).toContain('the stop file was ignored: not JSON (Unexpected end)');
  });
});

describe('failure paths: a fact becomes null (a count zero) and a warning says why', () => {
  it('missing events file: no excerpt, no head, so no git sections', () => {
    const job = fixtureJob();
    const head = acceptedHead(job, null);
    expect('unknown' in head).toBe(true);
    const j = build({
      events: { state: 'missing' },
      head,
      git: { unavailable: (head as { unknown: string }).unknown },
    });
    expect(j.head_sha).toBeNull();
    expect(j.checkpoints).toEqual({ created: 0, list: [], last_sha: null });
    expect(j.changes).toEqual({
      base_sha: BASE,
      head_sha: null,
      files_changed: null,
      insertions: null,
      deletions: null,
      top_files: null,
      diff_stat: null,
    });
    expect(j.sources.checkpoints).toBe('none');
    expect(j.extraction.checkpoints).toBe('none');
    expect(j.sources.changes).toBe('none');
    expect(j.verification.summary.attempts_total).toBe(3); // the job record still counts the runs
    expect(j.verification.last_failure).toEqual({
      command: 'npm test',
      exit_code: 1,
      error_excerpt: '',
      log_path: '/state/incrementum/jobs/job12345/events.jsonl',
    });
    expect(j.sources.last_failure).toBe('job record');
    expect(j.status.phase).toBe('reviewing'); // no stage events to tell the project review apart
    const w = j.warnings.join('\n');
    expect(w).toContain('the event log is missing');
    expect(w).toContain('the head commit is unknown');
    expect(w).toContain('no checkpoints');
    expect(w).toContain('no output excerpt for the failing command "npm test"');
  });

  it('git failing: checkpoints and changes null, the rest intact', () => {
    const j = build({
      git: {
        log: { ok: false, error: 'git log failed in /src/demo: fatal: bad revision' },
        numstat: { ok: false, error: 'git diff failed in /src/demo: fatal: bad object' },
        diffStat: { ok: false, error: 'git diff failed in /src/demo: fatal: bad object' },
      },
    });
    expect(j.checkpoints).toEqual({ created: 0, list: [], last_sha: null });
    expect(j.changes.files_changed).toBeNull();
    expect(j.changes.diff_stat).toBeNull();
    expect(j.milestones.total).toBe(2);
    expect(j.warnings).toEqual([
      'no checkpoints: git log failed in /src/demo: fatal: bad revision',
      'no change summary: git diff failed in /src/demo: fatal: bad object',
    ]);
  });

  it('a checkpoint line that does not parse is left out with a warning', () => {
    const good = fixtureGit();
    const log = good.log.ok ? good.log.value : [];
    const git = {
      ...good,
      log: { ok: true as const, value: [log[0]!, { sha: 'garbage line', time: NaN, subject: '' }, log[1]!] },
    };
    const j = build({ git });
    expect(j.checkpoints.list.map((c) => c.sha)).toEqual([HEAD1, HEAD2]);
    expect(j.checkpoints.created).toBe(2);
    expect(j.warnings).toEqual([
      'a checkpoint line of git log does not parse and was left out: "garbage line"',
    ]);
  });

  it('only the diff stat failing keeps the numbers', () => {
    const git = { ...fixtureGit(), diffStat: { ok: false as const, error: 'git diff failed: x' } };
    const j = build({ git });
    expect(j.changes).toMatchObject({ files_changed: 3, diff_stat: null });
    expect(j.warnings).toEqual(['no diff stat: git diff failed: x']);
  });

  it('an unreadable event log is a warning too', () => {
    const j = build({ events: { state: 'error', error: '/x/events.jsonl: EACCES' } });
    expect(j.warnings).toContain('the event log could not be read: /x/events.jsonl: EACCES');
  });

  it('event log lines that are not events are skipped with a warning naming the first', () => {
    const j = build({
      eventsSkipped: [
        { n: 3, error: 'not JSON (a torn or garbled line)' },
        { n: 9, error: 'Invalid input at exit_code' },
      ],
    });
    expect(j.warnings).toContain(
      '2 lines of /state/incrementum/jobs/job12345/events.jsonl are not an event and were skipped (line 3: not JSON (a torn or garbled line))',
    );
  });

  it('no changes: a job whose agents changed nothing has honest zeros', () => {
    const job = fixtureJob({ changes: [] });
    const head = acceptedHead(job, fixtureEvents());
    expect(head).toEqual({ sha: BASE, source: 'job record (base: nothing accepted)' });
    const empty = {
      log: { ok: true as const, value: [] },
      numstat: { ok: true as const, value: [] },
      diffStat: { ok: true as const, value: '' },
    };
    // Its agents changed nothing, so no test ever ran: no tests events either.
    const events = fixtureEvents().filter((e) => !e.type.startsWith('test'));
    const j = build({ job, head, git: empty, events: { state: 'ok', value: events } });
    expect(j.milestones).toEqual({ attempted: 0, total: 0, verified: 0, accepted: 0, iterations: 0 });
    expect(j.checkpoints).toEqual({ created: 0, list: [], last_sha: null });
    expect(j.changes).toMatchObject({ files_changed: 0, insertions: 0, deletions: 0, top_files: [] });
    expect(j.verification).toMatchObject({ summary: { attempts_total: 0 }, last_failure: null });
    expect(j.next_action).toMatchObject({
      title: 'Nothing to merge: close the todo',
      command: 'ii todo show todo0001',
    });
    expect(j.warnings).toEqual([]);
  });

  it('a legacy job (no changes, no agent sessions): milestones and verification N/A', () => {
    const legacy = Job.parse({
      id: 'old00001',
      repo: 'demo-1a2b3c4d',
      todo_id: 'todo0001',
      status: 'completed',
      started_at: '2025-01-01T00:00:00.000Z',
      updated_at: '2025-01-01T00:10:00.000Z',
      completed_at: '2025-01-01T00:10:00.000Z',
    });
    const head = acceptedHead(legacy, null);
    const j = build({
      job: legacy,
      events: { state: 'missing' },
      notes: { state: 'missing' },
      head,
      git: { unavailable: 'the job record has no base revision' },
    });
    expect(j.milestones).toEqual({ attempted: 0, total: 0, verified: 0, accepted: 0, iterations: 0 });
    expect(j.verification).toEqual({
      summary: { attempts_total: 0, attempts_passed: 0, attempts_failed: 0, total_duration_seconds: 0 },
      last_failure: null,
    });
    expect(j.checkpoints).toEqual({ created: 0, list: [], last_sha: null });
    expect(j.changes.files_changed).toBeNull();
    expect(j.base_sha).toBeNull();
    expect(j.extraction.verification).toBe('none');
    expect(j.status.duration_seconds).toBe(600);
    expect(j.notes).toEqual({ count: 0, path: '/state/incrementum/jobs/old00001/notes.jsonl', recent: [] });
    expect(j.usage.total).toEqual({ input_tokens: 0, output_tokens: 0, cost: 0 });
    expect(j.sources.milestones).toBe('none');
    expect(j.sources.verification).toBe('none');
    expect(j.warnings.join('\n')).toContain('a record from before changes were tracked');
  });

  it('a todo gone from the store: title and hash unknown', () => {
    const j = build({ todo: null });
    expect(j.task).toEqual({ path: null, sha256: null, title: null, goal: null, todo_id: 'todo0001' });
    expect(j.warnings).toContain('todo todo0001 is not in the store: its title and description are unknown');
  });

  it('unreadable notes: a count of 0 with a warning; garbled note lines skipped with a warning', () => {
    const unread = build({ notes: { state: 'error', error: 'EACCES' } });
    expect(unread.notes.count).toBe(0);
    expect(unread.warnings.join('\n')).toContain('the notes could not be read');
    const j = build({ notes: { state: 'ok', value: { notes: [], skipped: 2 } } });
    expect(j.notes?.count).toBe(0);
    expect(j.warnings[0]).toMatch(/2 lines of .* are not a note/);
  });

  it('accepted work but the event log recorded no commit: head unknown', () => {
    const events = fixtureEvents().filter((e) => e.type !== 'committed');
    expect(acceptedHead(fixtureJob(), events)).toEqual({
      unknown: 'the job accepted 2 changes, but the event log records no commit',
    });
    expect(acceptedHead(fixtureJob(), fixtureEvents())).toEqual({
      sha: HEAD2,
      source: 'events (last commit stage)',
    });
  });

  it('a failed run the record knows no command of: the event log supplies it', () => {
    const job = fixtureJob();
    job.changes[0]!.commits[0]!.test_results = [];
    const j = build({ job });
    expect(j.verification?.last_failure).toMatchObject({ command: 'npm test', exit_code: 1 });
    expect(j.sources.last_failure).toBe('events');
  });

  it('secrets in the stop reason and notes are redacted', () => {
    const j = build({
      job: fixtureJob({ status: 'failed', failure_reason: 'push failed: token=abcdef123456' }),
      notes: { state: 'ok', value: { notes: [{ ts: 'x', text: 'used password=hunter22' }], skipped: 0 } },
    });
    expect(JSON.stringify(j)).not.toMatch(/abcdef123456|hunter22/);
  });
});

describe('journal-v2 spec conformance', () => {
  const failedJob = (status: 'failed' | 'abandoned') =>
    fixtureJob({ status, failure_reason: 'the project review abandoned it', project_review: null });

  it('Fixes Applied 1: milestones.verified is 0 for a stopped run; accepted keeps what review accepted', () => {
    for (const status of ['failed', 'abandoned'] as const) {
      const j = build({ job: failedJob(status) });
      expect(j.status.terminal_state).toBe('stopped');
      expect(j.milestones).toMatchObject({ attempted: 2, total: 2, verified: 0, accepted: 2 });
    }
    // Nor has a running job passed the final verify yet.
    const running = build({
      job: fixtureJob({ status: 'active', completed_at: null, project_review: null }),
    });
    expect(running.milestones).toMatchObject({ verified: 0, accepted: 2 });
    expect(build().milestones).toMatchObject({ verified: 2, accepted: 2 });
  });

  it('Fixes Applied 9: status.duration_seconds is whole seconds, Math.round of the stored times', () => {
    const at = (ms: number) => new Date(Date.UTC(2026, 0, 2, 10, 0, 0, ms)).toISOString();
    const job = (end: number) => fixtureJob({ started_at: at(0), completed_at: at(end) });
    expect(build({ job: job(2779) }).status.duration_seconds).toBe(3);
    expect(build({ job: job(2499) }).status.duration_seconds).toBe(2);
    expect(build({ job: job(400) }).status.duration_seconds).toBe(0);
    expect(Number.isInteger(build({ job: job(61_500) }).status.duration_seconds)).toBe(true);
  });

  it('Fixes Applied 3: extraction.verification is timeline_v1 when the timeline counted attempts, and sources.verification agrees', () => {
    const j = build();
    expect(j.verification.summary.attempts_total).toBe(3);
    expect(j.extraction.verification).toBe('timeline_v1');
    expect(j.sources.verification).toBe('events (tests)');
  });

  it('Fixes Applied 3: no attempts, or attempts the timeline did not give, say none in both', () => {
    // No test run at all: the spec's rule, attempts_total 0 -> none.
    const job = fixtureJob({ changes: [] });
    const events = fixtureEvents().filter((e) => !e.type.startsWith('test'));
    const none = build({ job, events: { state: 'ok', value: events } });
    expect(none.verification.summary.attempts_total).toBe(0);
    expect(none.extraction.verification).toBe('none');
    expect(none.sources.verification).toBe('none (no test runs)');
    // The event log gone: the job record still counts the runs, and neither
    // says they came from the timeline.
    const noLog = build({ events: { state: 'missing' } });
    expect(noLog.verification.summary.attempts_total).toBe(3);
    expect(noLog.extraction.verification).toBe('none');
    expect(noLog.sources.verification).toBe('job record (no event log)');
    // A log from before tests events: likewise.
    const old = build({ events: { state: 'ok', value: fixtureEvents().filter((e) => e.type !== 'tests') } });
    expect(old.verification.summary).toEqual({
      attempts_total: 3,
      attempts_passed: 2,
      attempts_failed: 1,
      total_duration_seconds: 12,
    });
    expect(old.extraction.verification).toBe('none');
    expect(old.sources.verification).toBe('job record (the event log has no tests events)');
    expect(old.sources.last_failure).toBe('job record + events');
  });

  it("Fixes Applied 3: the attempts are the timeline's when it and the job record differ", () => {
    const events = fixtureEvents();
    events.push(
      JobEvent.parse({
        ts: '2026-01-02T10:09:00.000Z',
        type: 'tests',
        passed: false,
        results: [{ command: 'npm run e2e', exit_code: 2, duration_ms: 1000 }],
      }),
    );
    const j = build({ events: { state: 'ok', value: events } });
    expect(j.verification.summary).toMatchObject({ attempts_total: 4, attempts_failed: 2 });
    expect(j.verification.last_failure).toMatchObject({ command: 'npm run e2e', exit_code: 2 });
    expect(j.sources.last_failure).toBe('events (no output logged)');
  });
});
