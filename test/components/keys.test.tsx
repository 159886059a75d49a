// Every key of the keymap, each on a real store in a temp state dir, each
// waiting for the frame that shows its effect.
import { describe, expect, it } from 'vitest';
import { appendEvent } from '../../src/state/events.js';
import { KEYMAP } from '../../src/dashboard/view/keymap.js';
import { frameWith, frameWithout, KEY, makeJob, REPO, dashboards } from '../helpers/dash-fixture.js';
import { waitFor } from '../helpers/tmp.js';
import { shortJobId } from '../../src/model/job-id.js';

const board = dashboards();

const open = board.render;

describe('keys', () => {
  it('a asks y/n; n keeps the job, y asks its runner to abandon it', async () => {
    const fx = board.fixture();
    const job = makeJob(fx.state, { title: 'to abandon' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'to abandon');
    stdin.write('a');
    await frameWith(lastFrame, `Abandon job ${shortJobId(job.id)}?`, 'y/n');
    stdin.write('n');
    await frameWith(lastFrame, 'nothing abandoned');
    expect(fx.state.control.pending(job.id)).toHaveLength(0);
    stdin.write('a');
    await frameWith(lastFrame, 'y/n');
    stdin.write('y');
    await frameWith(lastFrame, 'abandon requested');
    expect(fx.state.control.pending(job.id).map((r) => r.kind)).toEqual(['abandon']);
    // The runner owns the record: it is still active until the runner acts.
    expect(fx.state.jobs.get(job.id)!.status).toBe('active');
  });

  it('esc also answers no to the abandon question', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'keep me' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'keep me');
    stdin.write('a');
    await frameWith(lastFrame, 'y/n');
    stdin.write(KEY.esc);
    await frameWith(lastFrame, 'nothing abandoned');
  });

  it('a on a stale job cleans it up here: abandoned, todo reopened', async () => {
    const fx = board.fixture({ dead: [777] });
    const job = makeJob(fx.state, { title: 'runner died', pid: 777 });
    fx.state.todos.setStatus(job.repo, job.todo_id, 'in_progress');
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'STALE');
    stdin.write('a');
    await frameWith(lastFrame, 'its runner is gone');
    stdin.write('y');
    await frameWith(lastFrame, 'abandoned stale job', 'Abandoned (1)');
    expect(fx.state.jobs.get(job.id)!.status).toBe('abandoned');
    expect(fx.state.todos.get(job.repo, job.todo_id)!.status).toBe('open');
  });

  it('a on a finished job says so and asks nothing', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'finished', finish: 'completed' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'finished');
    stdin.write('a');
    await frameWith(lastFrame, 'is already completed');
    expect(lastFrame()).not.toContain('y/n');
  });

  it('r asks y/n, then retries a finished job in the background; it refuses a running one', async () => {
    const fx = board.fixture();
    const failed = makeJob(fx.state, { title: 'failed one', finish: 'failed' });
    // Done by a later job (makeJob closes a failed job's todo, which r refuses: a closed todo takes no job).
    fx.state.todos.setStatus(REPO, failed.todo_id, 'done');
    makeJob(fx.state, { title: 'running one' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'failed one', 'running one');
    stdin.write('r');
    await frameWith(lastFrame, 'still running');
    expect(fx.retries).toEqual([]);
    // Past the empty columns straight to Failed.
    stdin.write(KEY.right);
    await waitFor(
      () => fx.dash.getState().nav.sel.jobs.key === failed.id,
      'the failed job selected',
      5000,
      5,
    );
    stdin.write('r');
    await frameWith(lastFrame, `Retry job ${shortJobId(failed.id)} as a new job?`);
    stdin.write('n');
    await frameWith(lastFrame, 'nothing retried');
    expect(fx.retries).toEqual([]);
    stdin.write('r');
    await frameWith(lastFrame, `Retry job ${shortJobId(failed.id)} as a new job?`);
    stdin.write('y');
    await frameWith(lastFrame, `retrying ${shortJobId(failed.id)} in the background`);
    expect(fx.retries).toEqual([failed.id]);
  });

  it('l shows the live log of the job, from its transcript and events; esc closes it', async () => {
    const fx = board.fixture();
    const job = makeJob(fx.state, { title: 'chatty' });
    const sid = 'sess-1';
    const transcript = `${fx.state.dir}/jobs/${job.id}/transcripts/${sid}.jsonl`;
    fx.state.jobs.addAgentSession(job.id, { purpose: 'implement', id: sid, transcript });
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(`${fx.state.dir}/jobs/${job.id}/transcripts`, { recursive: true });
    const update = (u: object) =>
      JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: sid, update: u } });
    writeFileSync(
      transcript,
      [
        update({
          sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: 'I will edit the parser' },
        }),
        update({
          sessionUpdate: 'tool_call',
          toolCallId: 't1',
          title: 'Edit src/parse.ts',
          kind: 'edit',
          status: 'completed',
        }),
      ].join('\n') + '\n',
    );
    appendEvent(fx.state.dir, job.id, 'test_start', { command: 'npm test' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'I will edit the parser', '[edit] Edit src/parse.ts', '$ npm test');
    stdin.write('l');
    await frameWith(lastFrame, `Log of job ${shortJobId(job.id)}`, 'I will edit the parser');
    stdin.write('k');
    stdin.write('j');
    stdin.write('f');
    await frameWith(lastFrame, 'Modified files of job');
    stdin.write('l');
    await frameWith(lastFrame, 'Log of job');
    stdin.write(KEY.esc);
    await frameWithout(lastFrame, 'Log of job');
  });

  it('f lists the modified files from the tracker, live', async () => {
    const fx = board.fixture();
    const job = makeJob(fx.state, { title: 'editing' });
    appendEvent(fx.state.dir, job.id, 'file_change', {
      path: 'src/a.ts',
      is_new: true,
      additions: 4,
      deletions: 0,
    });
    const { lastFrame, stdin } = await open(fx);
    fx.sync.start();
    await fx.sync.ready();
    await frameWith(lastFrame, '1 file this iteration (f: 1 in job)');
    stdin.write('f');
    await frameWith(lastFrame, 'Modified files of job', 'A src/a.ts  +4 -0');
    appendEvent(fx.state.dir, job.id, 'file_change', { path: 'src/b.ts', additions: 1, deletions: 2 });
    await frameWith(lastFrame, 'M src/b.ts  +1 -2', '(2)');
    stdin.write('f');
    await frameWithout(lastFrame, 'Modified files of job');
  });

  // file-tracking.md, Requirements › Functional › 2 "Modified Files Set" (clear the set at
  // iteration start) and 5 "TUI Display" (modified files count in the status bar during iteration).
  it("the status bar counts the current iteration's files, saying so; f lists the job's", async () => {
    const fx = board.fixture();
    const job = makeJob(fx.state, { title: 'iterating' });
    appendEvent(fx.state.dir, job.id, 'agent_start', { purpose: 'implement', agent_session_id: 'a1' });
    for (const path of ['src/a.ts', 'src/b.ts', 'src/c.ts'])
      appendEvent(fx.state.dir, job.id, 'file_change', { path, additions: 1, deletions: 0 });
    const { lastFrame, stdin } = await open(fx);
    fx.sync.start();
    await fx.sync.ready();
    await frameWith(lastFrame, '3 files this iteration (f: 3 in job)');
    // The next implement pass: the set starts empty; the job's total stays.
    appendEvent(fx.state.dir, job.id, 'agent_start', { purpose: 'implement', agent_session_id: 'a2' });
    await frameWith(lastFrame, '0 files this iteration (f: 3 in job)');
    appendEvent(fx.state.dir, job.id, 'file_change', { path: 'src/d.ts', additions: 2, deletions: 0 });
    appendEvent(fx.state.dir, job.id, 'file_change', { path: 'src/a.ts', additions: 1, deletions: 1 });
    await frameWith(lastFrame, '2 files this iteration (f: 4 in job)');
    // A review pass is no new iteration.
    appendEvent(fx.state.dir, job.id, 'agent_start', { purpose: 'review', agent_session_id: 'a3' });
    appendEvent(fx.state.dir, job.id, 'info', { message: 'reviewed' });
    await frameWith(lastFrame, 'reviewed');
    await frameWith(lastFrame, '2 files this iteration (f: 4 in job)');
    stdin.write('f');
    await frameWith(lastFrame, 'Modified files of job', '(4)', 'M src/a.ts', 'src/d.ts');
  });

  it("a finished job's status bar counts its last recorded iteration's files", async () => {
    const fx = board.fixture();
    // Two changes, one file each; the last iteration touched one.
    makeJob(fx.state, { title: 'done job', changes: 2, iterations: 2, finish: 'completed' });
    const { lastFrame } = await open(fx);
    await frameWith(lastFrame, '1 file last iteration (f: 2 in job)');
  });

  it('d shows the iteration diff of the selected iteration; q closes it', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'two iterations', changes: 1, iterations: 2, tested: true });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'two iterations');
    stdin.write('d');
    await frameWith(
      lastFrame,
      'Iteration diff',
      'iteration 2 of change 1',
      'summary:',
      'code diff unavailable',
    );
    stdin.write('q');
    await frameWithout(lastFrame, 'Iteration diff');
  });

  it('d with no iteration yet says so', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'fresh' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'fresh');
    stdin.write('d');
    await frameWith(lastFrame, 'no iteration to diff yet');
  });

  it('/ filters by text; backspace edits, enter applies, esc clears', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'parser bug' });
    makeJob(fx.state, { title: 'docs typo' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'parser bug', 'docs typo');
    stdin.write('/');
    await frameWith(lastFrame, 'filter: ');
    stdin.write('p');
    stdin.write('a');
    stdin.write('x');
    await frameWith(lastFrame, 'filter: pax');
    stdin.write(KEY.backspace);
    stdin.write('r');
    await frameWith(lastFrame, 'filter: par');
    const f = await frameWithout(lastFrame, 'docs typo');
    expect(f).toContain('parser bug');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'filter "par"');
    stdin.write(KEY.esc);
    await frameWith(lastFrame, 'docs typo', 'parser bug');
  });

  it('F hides and shows finished jobs', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'still going' });
    makeJob(fx.state, { title: 'all done', finish: 'completed' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'all done', 'Completed (1)');
    stdin.write('F');
    await frameWith(lastFrame, 'finished hidden (F)');
    expect(lastFrame()).not.toContain('all done');
    stdin.write('F');
    await frameWith(lastFrame, 'all done');
  });

  it('? shows every binding of the keymap; esc closes', async () => {
    const fx = board.fixture();
    const { lastFrame, stdin } = await open(fx, { columns: 120, rows: 60 });
    await frameWith(lastFrame, 'Jobs');
    stdin.write('?');
    const f = await frameWith(lastFrame, 'Keys (esc closes)');
    for (const b of KEYMAP.filter((b) =>
      b.when.some((m) => m === 'board' || m === 'detail' || m === 'overlay'),
    ))
      expect(f).toContain(b.description);
    stdin.write(KEY.esc);
    await frameWithout(lastFrame, 'Keys (esc closes)');
  });

  it('the commit detail scrolls its code diff with j/k, page keys and space', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'detail', changes: 1, iterations: 1, tested: true, review: 'ACCEPT' });
    const { lastFrame, stdin } = await open(fx, { columns: 100, rows: 12 });
    await frameWith(lastFrame, 'detail');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'Committed (1)');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'Accepted (1)');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'tests: passed');
    stdin.write('j');
    await frameWithout(lastFrame, 'tests: passed');
    stdin.write('k');
    await frameWith(lastFrame, 'tests: passed');
    stdin.write(' ');
    await frameWith(lastFrame, 'iteration diff');
    stdin.write('b');
    await frameWith(lastFrame, 'tests: passed');
    stdin.write('\u001B[6~'); // page down
    await frameWithout(lastFrame, 'tests: passed');
    stdin.write('\u001B[5~'); // page up
    await frameWith(lastFrame, 'tests: passed');
  });

  it('ctrl+c quits from a modal too', async () => {
    const fx = board.fixture();
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'Jobs');
    stdin.write('/');
    await frameWith(lastFrame, 'filter:');
    stdin.write('\u0003');
    await waitFor(() => fx.quits === 1, 'quit');
  });
});

describe('keys that arrive in one read', () => {
  // Typed fast, held down, or on a busy machine, several keys reach Ink in one
  // chunk, and Ink hands them over as one string: each must still count.
  it('jj moves down twice', async () => {
    const fx = board.fixture();
    for (const t of ['one', 'two', 'three']) makeJob(fx.state, { title: t });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'Implementing (3)');
    const [top, , third] = fx.dash.getState().jobs;
    await frameWith(lastFrame, `live: ${shortJobId(top!.id)}`);
    stdin.write('jj');
    await frameWith(lastFrame, `live: ${shortJobId(third!.id)}`);
  });

  it('ay asks and answers: the abandon is requested', async () => {
    const fx = board.fixture();
    const job = makeJob(fx.state, { title: 'quick hands' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'quick hands');
    stdin.write('ay');
    await frameWith(lastFrame, 'abandon requested');
    expect(fx.state.control.pending(job.id).map((r) => r.kind)).toEqual(['abandon']);
  });

  it('a filter typed in one go, enter included, is applied', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'parser bug' });
    makeJob(fx.state, { title: 'docs typo' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'parser bug', 'docs typo');
    stdin.write('/par\r');
    const f = await frameWith(lastFrame, 'filter "par"');
    expect(f).not.toContain('docs typo');
  });
});
