// A failed job answers "why?" from the dashboard: the iteration detail shows
// the failing command's output and the whole review at 80×24, `l` is the
// job's whole log after it ended, and `f` lists its files from the record.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { render } from 'ink-testing-library';
import { expect, it } from 'vitest';
import { CommitDetail } from '../../components/CommitDetail.js';
import { testRuns } from '../../src/job/job-log.js';
import type { StateStore } from '../../src/state/index.js';
import { waitFor } from '../helpers/tmp.js';
import { frameWith, frameWithout, KEY, makeJob, dashboards } from '../helpers/dash-fixture.js';
import { shortJobId } from '../../src/model/job-id.js';

const board = dashboards();

const OUTPUT = [
  ...Array.from({ length: 40 }, (_, i) => `ok ${i + 1} passes`),
  'FAIL sum: expected 3, got 4',
].join('\n');

/** A failed job whose only iteration's `npm test` failed, with its events and an implement transcript. */
function failedJob(state: StateStore) {
  const job = makeJob(state, { title: 'sum', changes: 1, iterations: 1, tested: false, finish: 'failed' });
  state.jobs.updateCurrentCommit(job.id, {
    test_results: [{ command: 'npm test', exit_code: 1, duration_ms: 930 }],
  });
  const transcript = join(state.dir, 'jobs', job.id, 'transcripts', 'aaa111.jsonl');
  mkdirSync(dirname(transcript), { recursive: true });
  const chunk = (text: string) =>
    JSON.stringify({
      ts: 't',
      dir: 'in',
      message: {
        jsonrpc: '2.0',
        method: 'session/update',
        params: {
          sessionId: 's',
          update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } },
        },
      },
    });
  writeFileSync(transcript, chunk('I changed sum.ts') + '\n');
  state.jobs.addAgentSession(job.id, { purpose: 'implement', id: 'aaa111', transcript });
  const events = [
    { type: 'agent_start', purpose: 'implement', agent_session_id: 'aaa111' },
    {
      type: 'iteration:started',
      change_id: 'c',
      change_number: 1,
      iteration: 1,
      commit_id: 'abc',
      files: [],
    },
    { type: 'stage', from: 'implementing', to: 'testing' },
    { type: 'test_start', command: 'npm test' },
    { type: 'test_output', command: 'npm test', stream: 'stdout', text: OUTPUT + '\n' },
    { type: 'test_end', command: 'npm test', exit_code: 1, duration_ms: 930, tail: 'FAIL sum\n' },
    { type: 'tests', passed: false, results: [{ command: 'npm test', exit_code: 1, duration_ms: 930 }] },
  ];
  writeFileSync(
    join(state.dir, 'jobs', job.id, 'events.jsonl'),
    events.map((e) => JSON.stringify({ ts: 't', ...e }) + '\n').join(''),
  );
  return state.jobs.get(job.id)!;
}

it('the iteration detail shows the failing command output at 80×24: its end, and all of it with o', async () => {
  const fx = board.fixture();
  failedJob(fx.state);
  const app = await board.render(fx, { columns: 80, rows: 24 });
  await frameWith(app.lastFrame, 'sum');
  app.stdin.write(KEY.enter);
  await frameWith(app.lastFrame, 'Fail (1)');
  app.stdin.write('j');
  await waitFor(() => fx.dash.getState().nav.sel.changes.key != null, 'the cursor on the change');
  app.stdin.write(KEY.enter);
  await frameWith(app.lastFrame, 'iteration');
  app.stdin.write(KEY.enter);
  const f = await frameWith(
    app.lastFrame,
    '✗ npm test (exit 1, 930 ms)',
    '│ FAIL sum: expected 3, got 4',
    'o shows all',
  );
  expect(f).not.toContain('ok 1 passes');
  expect(f).toContain('review: none (the tests failed');
  expect(Math.max(...f.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
  app.stdin.write('o');
  await frameWith(app.lastFrame, '│ ok 1 passes');
  await frameWithout(app.lastFrame, 'o shows all');
});

it('the iteration detail wraps the whole review and the job’s reason at 80 columns', async () => {
  const fx = board.fixture();
  const job = makeJob(fx.state, { title: 'r', changes: 1, iterations: 1, tested: true });
  const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
  fx.state.jobs.updateCurrentCommit(job.id, {
    review: {
      outcome: 'REQUEST_CHANGES',
      comments: `${words} END-OF-REVIEW`,
      agent_session_id: null,
      reviewed_at: 't',
    },
  });
  fx.state.jobs.finish(job.id, 'failed', `${words} END-OF-REASON`);
  const app = render(
    <CommitDetail
      job={fx.state.jobs.get(job.id)!}
      change={0}
      iteration={0}
      code={undefined}
      width={80}
      height={23}
      scroll={0}
      color={false}
      tests={testRuns([])}
    />,
  );
  const f = await frameWith(app.lastFrame, 'END-OF-REVIEW', 'END-OF-REASON', 'word59');
  app.unmount();
  expect(Math.max(...f.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
});

it('l on a finished job is its whole log; f lists its files from the record', async () => {
  const fx = board.fixture();
  const job = failedJob(fx.state);
  const app = await board.render(fx, { columns: 100, rows: 40 });
  await frameWith(app.lastFrame, 'sum');
  app.stdin.write('l');
  const f = await frameWith(
    app.lastFrame,
    `Log of job ${shortJobId(job.id)}`,
    '=== 1. implement',
    'FAIL sum',
    'reason: agent crashed',
  );
  expect(f).toContain('I changed sum.ts');
  expect(f).not.toContain('no agent activity');
  app.stdin.write(KEY.esc);
  await frameWithout(app.lastFrame, 'Log of job');
  app.stdin.write('f');
  const files = await frameWith(app.lastFrame, 'Modified files', 'src/f0.ts');
  expect(files).not.toContain('no files modified');
});

it('a failed job’s change is Failed, not Abandoned, and its last iteration says why it has no review', async () => {
  const fx = board.fixture();
  const job = makeJob(fx.state, { title: 'crashed', changes: 1, iterations: 2, tested: true });
  fx.state.jobs.finish(
    job.id,
    'failed',
    'the review agent crashed: exit 137\nRun it again with ii job retry.',
  );
  const app = await board.render(fx, { columns: 120, rows: 30 });
  const { lastFrame, stdin } = app;
  // The jobs board's card shows the reason's first line, not an escaped "\n" run.
  let f = await frameWith(lastFrame, 'the review agent');
  expect(f).not.toContain('\\n');
  stdin.write(KEY.enter);
  f = await frameWith(lastFrame, 'Failed (1)', 'job failed: the review');
  expect(f).not.toMatch(/Aband\w* \(1\)/);
  stdin.write(KEY.enter);
  // i1 was reviewed (REQUEST_CHANGES); i2, the last, never was: its card says why.
  await frameWith(lastFrame, 'no review: the review ag');
  stdin.write('j');
  stdin.write(KEY.enter);
  f = await frameWith(
    lastFrame,
    'review: none, the job failed before its review: the review agent crashed: exit 137',
  );
  expect(f).not.toContain('review: none yet');
});
