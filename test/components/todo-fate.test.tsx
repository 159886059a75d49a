// `a` and `r` decide about the todo too: the question says what happens to
// it (a runner starts an abandoned job's todo again; a retry reopens a done
// one), and `x` in the abandon question closes the todo as the job is
// abandoned, so no runner takes it.
import { expect, it } from 'vitest';
import { frameWith, KEY, makeJob, REPO, dashboards } from '../helpers/dash-fixture.js';
import { waitFor } from '../helpers/tmp.js';
import { shortJobId } from '../../src/model/job-id.js';

const board = dashboards();

const SIZE = { columns: 80, rows: 24 };
/** The frame's text with the question box's borders and line breaks gone, so a wrapped sentence reads whole. */
const flat = (frame: string | undefined) =>
  (frame ?? '')
    .split('\n')
    .map((l) => l.replace(/^\s*[│╭╰]/, '').replace(/[│╮╯]\s*$/, ''))
    .join(' ')
    .replace(/\s+/g, ' ');

async function says(lastFrame: () => string | undefined, ...texts: string[]): Promise<string> {
  return waitFor(
    () => {
      const f = flat(lastFrame());
      return texts.every((t) => f.includes(t)) ? f : null;
    },
    `a frame saying ${texts.join(' / ')}`,
    5000,
    10,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\nlast frame:\n${lastFrame() ?? ''}`);
  });
}

it('a while a runner runs: the todo goes back and the runner starts it again; x abandons and closes it', async () => {
  const fx = board.fixture();
  const job = makeJob(fx.state, { title: 'Long one' });
  // A live ii run of the repository (pid 4242 is alive for the fixture's probe).
  fx.state.runners.register({ repo: REPO, pid: 4242, host: 'here', slots: 1, watch: true });
  const app = await board.render(fx, SIZE);
  const { lastFrame, stdin } = app;
  await frameWith(lastFrame, 'Long one');
  stdin.write('a');
  await says(
    lastFrame,
    `Abandon job ${shortJobId(job.id)}?`,
    'Its todo “Long one” goes back to the backlog and the runner will start it again.',
    'y/n',
    'x abandon and close the todo',
  );
  stdin.write('x');
  await frameWith(lastFrame, 'abandon requested');
  expect(flat(lastFrame())).toContain(`todo ${job.todo_id} closed`);
  expect(fx.state.control.pending(job.id).map((r) => r.kind)).toEqual(['abandon']);
  // Closed while its job still runs: when the job ends, its todo is not
  // in progress, so it is not reopened, and no runner ever sees it open.
  expect(fx.state.jobs.get(job.id)!.status).toBe('active');
  expect(fx.state.todos.get(REPO, job.todo_id)!.status).toBe('closed');
});

it('a with no runner, and with the attempts used up, says so', async () => {
  const fx = board.fixture();
  const job = makeJob(fx.state, { title: 'Alone' });
  const app = await board.render(fx, SIZE);
  const { lastFrame, stdin } = app;
  await frameWith(lastFrame, 'Alone');
  stdin.write('a');
  await says(
    lastFrame,
    'Its todo “Alone” goes back to the backlog, ready: R or ii run would start it again.',
  );
  stdin.write(KEY.esc);
  await frameWith(lastFrame, 'nothing abandoned');

  // An earlier job of the todo failed: with max-attempts 2, this abandon is the last try.
  const earlier = fx.state.jobs.create(REPO, { todo_id: job.todo_id, pid: 4242, host: 'here' });
  fx.state.jobs.finish(earlier.id, 'failed', 'agent crashed');
  stdin.write('a');
  await says(
    lastFrame,
    'goes back to the backlog, blocked (failed 1×, abandoned 1×: ii todo reopen), so no runner starts it.',
  );
  stdin.write('n');
  await frameWith(lastFrame, 'nothing abandoned');
  expect(fx.state.control.pending(job.id)).toHaveLength(0);
  expect(fx.state.todos.get(REPO, job.todo_id)!.status).toBe('in_progress');
});

it('r on a failed job whose todo is done says the new job reopens it; on a closed todo it says to reopen it first', async () => {
  const fx = board.fixture();
  const failed = makeJob(fx.state, { title: 'Done elsewhere', finish: 'failed' });
  fx.state.todos.setStatus(REPO, failed.todo_id, 'done');
  const app = await board.render(fx, SIZE);
  const { lastFrame, stdin } = app;
  await frameWith(lastFrame, 'Done elsewhere');
  // Its card is the only one: the cursor is on it.
  stdin.write('r');
  await says(
    lastFrame,
    `Retry job ${shortJobId(failed.id)} as a new job?`,
    `Its todo ${failed.todo_id} is done: the new job reopens it`,
  );
  // x answers only the abandon question: here it does nothing, the question stays.
  stdin.write('x');
  stdin.write('n');
  await frameWith(lastFrame, 'nothing retried');
  expect(fx.state.todos.get(REPO, failed.todo_id)!.status).toBe('done');
  expect(fx.state.control.pending(failed.id)).toHaveLength(0);

  fx.state.todos.close(REPO, failed.todo_id);
  stdin.write('r');
  await says(
    lastFrame,
    `todo ${failed.todo_id} is closed, so a new job would be refused: ii todo reopen ${failed.todo_id}`,
  );
  expect(fx.retries).toEqual([]);
});
