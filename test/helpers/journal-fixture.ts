// A finished job, its event log and git facts, as plain values for the pure
// journal builder: every test starts from this and breaks one thing.
import type { GitFacts } from '../../src/journal/git-facts.js';
import type { JournalInputs } from '../../src/journal/inputs.js';
import { Job, type JobCommit } from '../../src/model/job.js';
import { Todo } from '../../src/model/todo.js';
import { JobEvent } from '../../src/model/event.js';

export const BASE = 'b'.repeat(40);
export const HEAD1 = '1'.repeat(40);
export const HEAD2 = '2'.repeat(40);
const t = (min: number, sec = 0) => new Date(Date.UTC(2026, 0, 2, 10, min, sec)).toISOString();

const review = (outcome: 'ACCEPT' | 'REQUEST_CHANGES', at: string, comments = '') => ({
  outcome,
  comments,
  agent_session_id: 'r',
  reviewed_at: at,
});

function commit(c: Partial<JobCommit> & { commit_id: string; created_at: string }): Partial<JobCommit> {
  return c;
}

export function fixtureJob(over: Partial<Job> = {}): Job {
  return Job.parse({
    id: 'job12345',
    repo: 'demo-1a2b3c4d',
    todo_id: 'todo0001',
    session_id: 's1',
    stage: 'reviewing',
    status: 'completed',
    base_rev: BASE,
    workspace_path: '/nonexistent/ws',
    started_at: t(0),
    updated_at: t(12, 30),
    completed_at: t(12, 30),
    usage: { input_tokens: 12000, output_tokens: 3400, cost: 0.42 },
    agent_sessions: [
      {
        purpose: 'implement',
        id: 'a1',
        transcript: '/x/a1.jsonl',
        usage: { input_tokens: 5000, output_tokens: 2000, cost: 0.2 },
      },
      {
        purpose: 'implement',
        id: 'a2',
        transcript: '/x/a2.jsonl',
        usage: { input_tokens: 3000, output_tokens: 1000, cost: 0.1 },
      },
      {
        purpose: 'review',
        id: 'a3',
        transcript: '/x/a3.jsonl',
        usage: { input_tokens: 2000, output_tokens: 200, cost: 0.06 },
      },
      { purpose: 'project-review', id: 'a4', transcript: '/x/a4.jsonl' },
    ],
    changes: [
      {
        change_id: 'Ichange1',
        created_at: t(1),
        commits: [
          commit({
            commit_id: 'c1a',
            created_at: t(2),
            tests_passed: false,
            test_results: [
              { command: 'npm run lint', exit_code: 0, duration_ms: 1500 },
              { command: 'npm test', exit_code: 1, duration_ms: 4000 },
            ],
          }),
          commit({
            commit_id: 'c1b',
            created_at: t(4),
            tests_passed: true,
            test_results: [
              { command: 'npm run lint', exit_code: 0, duration_ms: 1500 },
              { command: 'npm test', exit_code: 0, duration_ms: 3000 },
            ],
            review: review('ACCEPT', t(5)),
          }),
        ],
      },
      {
        change_id: 'Ichange2',
        created_at: t(6),
        commits: [
          commit({
            commit_id: 'c2a',
            created_at: t(7),
            tests_passed: true,
            test_results: [{ command: 'npm test', exit_code: 0, duration_ms: 2000 }],
            review: review('ACCEPT', t(8)),
          }),
        ],
      },
    ],
    project_review: review('ACCEPT', t(12)),
    ...over,
  });
}

export const fixtureTodo = (): Todo =>
  Todo.parse({
    id: 'todo0001',
    repo: 'demo-1a2b3c4d',
    title: 'Add a --verbose flag',
    description: 'Print each step.',
    type: 'feature',
    priority: 2,
    deps: [],
    status: 'done',
    created_at: t(0),
    updated_at: t(12, 30),
  });

const ev = (ts: string, type: JobEvent['type'], data: Record<string, unknown> = {}): JobEvent =>
  JobEvent.parse({ ts, type, ...data });

export function fixtureEvents(): JobEvent[] {
  return [
    ev(t(0), 'stage', { from: null, to: 'implementing' }),
    ev(t(2), 'stage', { from: 'implementing', to: 'testing' }),
    ev(t(2), 'test_start', { command: 'npm run lint' }),
    ev(t(2), 'test_end', { command: 'npm run lint', exit_code: 0, duration_ms: 1500 }),
    ev(t(2), 'test_start', { command: 'npm test' }),
    ev(t(2), 'test_output', { command: 'npm test', stream: 'stdout', text: 'running 3 tests\n' }),
    ev(t(2), 'test_output', {
      command: 'npm test',
      stream: 'stderr',
      text:
        'FAIL adds numbers\n  expected 3 to be 4\nenv OPENAI_API_KEY=' +
        'sk-' +
        'abcdefghijklmnopqrstuvwxyz123456' +
        '\n',
    }),
    ev(t(3), 'test_end', { command: 'npm test', exit_code: 1, duration_ms: 4000 }),
    ev(t(3), 'tests', {
      passed: false,
      results: [
        { command: 'npm run lint', exit_code: 0, duration_ms: 1500 },
        { command: 'npm test', exit_code: 1, duration_ms: 4000 },
      ],
    }),
    ev(t(3), 'stage', { from: 'testing', to: 'implementing' }),
    ev(t(4), 'stage', { from: 'implementing', to: 'testing' }),
    ev(t(4), 'test_start', { command: 'npm test' }),
    ev(t(4), 'test_output', { command: 'npm test', stream: 'stdout', text: 'all passed\n' }),
    ev(t(4), 'test_end', { command: 'npm test', exit_code: 0, duration_ms: 3000 }),
    ev(t(4), 'tests', {
      passed: true,
      results: [
        { command: 'npm run lint', exit_code: 0, duration_ms: 1500 },
        { command: 'npm test', exit_code: 0, duration_ms: 3000 },
      ],
    }),
    ev(t(5), 'committed', { commit_id: HEAD1, change_id: 'Ichange1' }),
    ev(t(7), 'tests', {
      passed: true,
      results: [{ command: 'npm test', exit_code: 0, duration_ms: 2000 }],
    }),
    ev(t(8), 'committed', { commit_id: HEAD2, change_id: 'Ichange2' }),
    ev(t(11), 'stage', { from: 'implementing', to: 'project-review' }),
    ev(t(12, 30), 'finished', { status: 'completed' }),
  ];
}

export function fixtureGit(): GitFacts {
  return {
    log: {
      ok: true,
      value: [
        { sha: HEAD1, time: Date.UTC(2026, 0, 2, 10, 5) / 1000, subject: 'feat: add --verbose' },
        { sha: HEAD2, time: Date.UTC(2026, 0, 2, 10, 8) / 1000, subject: 'docs: mention --verbose' },
      ],
    },
    numstat: {
      ok: true,
      value: [
        { path: 'src/cli.ts', insertions: 20, deletions: 3 },
        { path: 'README.md', insertions: 4, deletions: 0 },
        { path: 'assets/logo.png', insertions: null, deletions: null },
      ],
    },
    diffStat: {
      ok: true,
      value:
        ' README.md       |   4 ++++\n assets/logo.png | Bin 0 -> 10 bytes\n src/cli.ts      |  23 ++++++++++++++++++++---\n 3 files changed, 24 insertions(+), 3 deletions(-)',
    },
  };
}

export function fixtureInputs(over: Partial<JournalInputs> = {}): JournalInputs {
  return {
    job: fixtureJob(),
    todo: fixtureTodo(),
    stateDir: '/state/incrementum',
    repoRoot: '/src/demo',
    events: { state: 'ok', value: fixtureEvents() },
    eventsSkipped: [],
    notes: { state: 'ok', value: { notes: [{ ts: t(13), text: 'merged by hand' }], skipped: 0 } },
    stop: { state: 'missing' },
    head: { sha: HEAD2, source: 'events (last commit stage)' },
    git: fixtureGit(),
    stale: false,
    now: new Date(Date.UTC(2026, 0, 2, 11, 0)),
    generatedBy: 'incrementum 0.1.0',
    fingerprint: {
      job_updated_at: t(12, 30),
      job_sha256: '0'.repeat(64),
      stale: false,
      events: { size: 100, mtime_ms: 1 },
      notes: null,
      stop: null,
    },
    ...over,
  };
}
