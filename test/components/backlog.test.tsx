// The board runs the backlog (issue [backlog]): the Backlog column (ready in
// run order, then blocked, each saying why), the n form, x, s and e on a
// todo, and the runner's state in the header with R, + and -. On a real store
// in a temp state dir; processes the keys would start are recorded instead
// (the tmux test starts real ones).
import { describe, expect, it } from 'vitest';
import { runLine } from '../../src/dashboard/view/run-line.js';
import {
  frameWith,
  frameWithout,
  KEY,
  makeJob,
  REPO,
  dashboards,
  type DashFixture,
} from '../helpers/dash-fixture.js';
import { waitFor } from '../helpers/tmp.js';
import { shortJobId } from '../../src/model/job-id.js';

const board = dashboards();

interface Spawned {
  jobs: string[];
  runners: number[];
  stopped: number[];
  edited: (() => void)[];
}

function fixture(): { f: DashFixture; spawned: Spawned } {
  const spawned: Spawned = { jobs: [], runners: [], stopped: [], edited: [] };
  const f = board.fixture({
    deps: {
      spawnJob: (id) => (spawned.jobs.push(id), { pid: 11, log: 'job.log' }),
      spawnRunner: (slots) => (spawned.runners.push(slots), { pid: 12, log: 'run.log' }),
      stopRunner: (pid) => void spawned.stopped.push(pid),
      suspend: (fn) => void spawned.edited.push(fn),
    },
  });
  return { f, spawned };
}

/** Types text as a person does, one key at a time. */
const type = (stdin: { write(s: string): void }, text: string) => {
  for (const ch of text) stdin.write(ch);
};

describe('the Backlog column', () => {
  it('lists ready todos in run order, then the blocked ones with what blocks them, with a count', async () => {
    const { f: fx } = fixture();
    const s = fx.state;
    const later = s.todos.create(REPO, { title: 'later work', priority: 3 });
    const first = s.todos.create(REPO, { title: 'urgent fix', priority: 0, type: 'bug' });
    s.todos.create(REPO, { title: 'after the fix', deps: [first.id] });
    s.todos.create(REPO, { title: 'evil \x1b[2J\x1b]0;owned\x07 title' });
    const app = await board.render(fx, { columns: 140, rows: 30 });
    const frame = await frameWith(app.lastFrame, 'Backlog (4)', 'urgent fix', `waits for ${first.id} (open)`);
    const order = ['urgent fix', 'evil', 'later work', 'after the fix'].map((t) => frame.indexOf(t));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(frame).toContain(`ready · p0 bug · ${first.id}`);
    expect(frame).toContain(`ready · p3 task · ${later.id}`);
    // A hostile title is shown escaped: no clear-screen, no title change.
    expect(frame).not.toContain('\x1b[2J');
    expect(frame).not.toContain('\x07');
    // Drilling into a todo goes nowhere: it has no changes yet.
    app.stdin.write(KEY.enter);
    await frameWith(app.lastFrame, 'Backlog (4)');
    expect(fx.dash.getState().nav.level).toBe('jobs');
  });

  it('shows a todo another process creates without a key press', async () => {
    const { f: fx } = fixture();
    makeJob(fx.state, { title: 'a job' });
    const app = await board.render(fx);
    await frameWith(app.lastFrame, 'a job');
    fx.sync.start();
    await fx.sync.ready();
    fx.state.todos.create(REPO, { title: 'written elsewhere' });
    await frameWith(app.lastFrame, 'Backlog (1)', 'written elsewhere');
  });
});

describe('todo keys', () => {
  it('n asks for a title, then type, priority and description; the todo is created and shown', async () => {
    const { f: fx } = fixture();
    makeJob(fx.state, { title: 'a job' });
    const app = await board.render(fx, { columns: 120, rows: 30 });
    const { lastFrame, stdin } = app;
    await frameWith(lastFrame, 'a job');
    stdin.write('n');
    await frameWith(lastFrame, 'new todo', 'title:');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'a todo needs a title');
    type(stdin, 'Parse dates');
    await frameWith(lastFrame, 'title: Parse dates');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'type: task, bug, feature, chore');
    type(stdin, 'bug');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'priority, 0 (first) to 4');
    type(stdin, '9');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'the priority is a number from 0 (first) to 4');
    stdin.write(KEY.backspace);
    type(stdin, '1');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'description (enter: none)');
    stdin.write(KEY.enter);
    const f = await frameWith(lastFrame, 'Todo (1)', 'Parse dates', 'ready · p1 bug');
    expect(f).toMatch(/todo \S+ created/);
    const [todo] = fx.state.todos.list(REPO).filter((t) => t.title === 'Parse dates');
    expect(todo).toMatchObject({ type: 'bug', priority: 1, description: '', status: 'open' });
  });

  it('esc in the form writes nothing, and q there is text, not quit', async () => {
    const { f: fx } = fixture();
    const app = await board.render(fx);
    const { lastFrame, stdin } = app;
    await frameWith(lastFrame, 'Jobs');
    const before = fx.state.todos.list(REPO).length;
    stdin.write('n');
    await frameWith(lastFrame, 'title:');
    type(stdin, 'quick q');
    await frameWith(lastFrame, 'title: quick q');
    expect(fx.quits).toBe(0);
    stdin.write(KEY.esc);
    await frameWith(lastFrame, 'nothing created');
    expect(fx.state.todos.list(REPO)).toHaveLength(before);
  });

  it('x asks, then closes the todo; n keeps it', async () => {
    const { f: fx } = fixture();
    const t = fx.state.todos.create(REPO, { title: 'not needed' });
    const app = await board.render(fx, { columns: 120, rows: 30 });
    const { lastFrame, stdin } = app;
    await frameWith(lastFrame, 'not needed');
    stdin.write('x');
    await frameWith(lastFrame, `Close todo ${t.id}`, 'y/n');
    stdin.write('n');
    await frameWith(lastFrame, 'nothing closed');
    expect(fx.state.todos.get(REPO, t.id)?.status).toBe('open');
    stdin.write('x');
    await frameWith(lastFrame, `Close todo ${t.id}`);
    stdin.write('y');
    await frameWith(lastFrame, `todo ${t.id} closed`);
    await frameWithout(lastFrame, 'not needed');
    expect(fx.state.todos.get(REPO, t.id)?.status).toBe('closed');
  });

  it('s starts a ready todo at once, asks first for a blocked one, and says where todos are', async () => {
    const { f, spawned } = fixture();
    const job = makeJob(f.state, { title: 'a job' });
    const dep = f.state.todos.create(REPO, { title: 'first' });
    const waits = f.state.todos.create(REPO, { title: 'second', deps: [dep.id] });
    const app = await board.render(f, { columns: 140, rows: 30 });
    const { lastFrame, stdin } = app;
    await frameWith(lastFrame, 'Backlog (2)', `live: ${shortJobId(job.id)}`);
    // The cursor is on the job: s says what it is for.
    stdin.write('s');
    await frameWith(lastFrame, 's starts a todo: select one in the Backlog column');
    stdin.write(KEY.left);
    await frameWith(lastFrame, 'Backlog (2)');
    stdin.write('s');
    await waitFor(() => (spawned.jobs.length ? true : null), 'the job started');
    expect(spawned.jobs).toEqual([dep.id]);
    stdin.write(KEY.down);
    stdin.write('s');
    await frameWith(lastFrame, `Todo ${waits.id} is blocked (waits for ${dep.id} (open))`);
    stdin.write('y');
    await waitFor(() => (spawned.jobs.length === 2 ? true : null), 'the second job started');
    expect(spawned.jobs).toEqual([dep.id, waits.id]);
  });

  it('e gives the terminal to the editor and saves the todo it gives back', async () => {
    const { f, spawned } = fixture();
    const t = f.state.todos.create(REPO, { title: 'rough idea' });
    const app = await board.render(f, { columns: 120, rows: 30 });
    const { lastFrame, stdin } = app;
    await frameWith(lastFrame, 'rough idea');
    const editor = `${f.dir}/editor.sh`;
    const { writeFileSync, chmodSync } = await import('node:fs');
    // An editor that rewrites the title line.
    writeFileSync(editor, '#!/bin/sh\nsed -i "s/^title: .*/title: sharp idea/" "$1"\n');
    chmodSync(editor, 0o755);
    const saved = process.env.EDITOR;
    process.env.EDITOR = editor;
    try {
      stdin.write('e');
      await waitFor(() => (spawned.edited.length ? true : null), 'the editor to be asked for');
      spawned.edited[0]!();
    } finally {
      if (saved === undefined) delete process.env.EDITOR;
      else process.env.EDITOR = saved;
    }
    await frameWith(lastFrame, `todo ${t.id} saved`, 'sharp idea');
    expect(f.state.todos.get(REPO, t.id)?.title).toBe('sharp idea');
  });
});

describe('the backlog runner on the board', () => {
  it('the header says off, then the running slots; + and - change them in the store; R asks before stopping', async () => {
    const { f, spawned } = fixture();
    f.state.todos.create(REPO, { title: 'ready one' });
    const blocker = f.state.todos.create(REPO, { title: 'blocker' });
    f.state.todos.create(REPO, { title: 'blocked one', deps: [blocker.id] });
    makeJob(f.state, { title: 'running' });
    const app = await board.render(f, { columns: 120, rows: 30 });
    const { lastFrame, stdin } = app;
    await frameWith(lastFrame, 'run: off · 2 ready · 1 blocked');
    stdin.write('+');
    await frameWith(lastFrame, 'no backlog runner runs: R starts one');
    stdin.write('R');
    await waitFor(() => (spawned.runners.length ? true : null), 'a runner to start');
    // No incrementum.toml here: [run] jobs defaults to 2.
    expect(spawned.runners).toEqual([2]);
    // What a started ii run records (the fixture's probe says every pid on 'here' is alive).
    const r = f.state.runners.register({ repo: REPO, pid: 4343, host: 'here', slots: 2, watch: true });
    f.sync.refreshJobs();
    await frameWith(lastFrame, 'run: 1/2 slots · 2 ready · 1 blocked');
    stdin.write('+');
    await frameWith(lastFrame, 'runner slots: 3', 'run: 1/3 slots');
    expect(f.state.runners.get(r.id)?.slots).toBe(3);
    stdin.write('-');
    stdin.write('-');
    await frameWith(lastFrame, 'run: 1/1 slots');
    stdin.write('-');
    await frameWith(lastFrame, 'the runner keeps at least 1 slot');
    expect(f.state.runners.get(r.id)?.slots).toBe(1);
    stdin.write('R');
    await frameWith(lastFrame, 'Stop the backlog runner (pid 4343)?');
    stdin.write('n');
    await frameWith(lastFrame, 'the runner goes on');
    expect(spawned.stopped).toEqual([]);
    stdin.write('R');
    await frameWith(lastFrame, 'Stop the backlog runner');
    stdin.write('y');
    await frameWith(lastFrame, 'backlog runner stopping');
    expect(spawned.stopped).toEqual([4343]);
  });

  it('runners on other machines: each machine adds its slots, + and - change theirs, R adds one here', async () => {
    // A shared store: `ii run` counts only its own machine's jobs against its
    // slots (backlog/scheduler.ts), so the header sums the machines' slots and
    // counts the jobs on those machines; R here is one more machine's runner.
    const { f, spawned } = fixture();
    f.state.todos.create(REPO, { title: 'ready one' });
    const onA = f.state.todos.create(REPO, { title: 'on a' });
    f.state.jobs.create(REPO, { todo_id: onA.id, pid: 7001, host: 'a' });
    makeJob(f.state, { title: 'by hand here' }); // host 'here', where no runner runs
    const a = f.state.runners.register({ repo: REPO, pid: 5001, host: 'a', slots: 2, watch: true });
    const b = f.state.runners.register({ repo: REPO, pid: 5002, host: 'b', slots: 3, watch: true });
    const app = await board.render(f, { columns: 140, rows: 30 });
    const { lastFrame, stdin } = app;
    await frameWith(lastFrame, 'run: 1/5 slots on 2 machines (+1 elsewhere) · 1 ready · 1 blocked');
    stdin.write('+');
    await frameWith(lastFrame, 'runner slots: 4 on each other machine (none runs here)');
    expect([f.state.runners.get(a.id)?.slots, f.state.runners.get(b.id)?.slots]).toEqual([4, 4]);
    await frameWith(lastFrame, 'run: 1/8 slots on 2 machines');
    // R does not offer to stop runners it cannot reach: it starts this machine's.
    stdin.write('R');
    await waitFor(() => (spawned.runners.length ? true : null), 'a runner to start here');
    await frameWith(lastFrame, 'beside the runners on other machines');
    const here = f.state.runners.register({ repo: REPO, pid: 4343, host: 'here', slots: 2, watch: true });
    f.sync.refreshJobs();
    await frameWith(lastFrame, 'run: 2/10 slots on 3 machines · 1 ready');
    stdin.write('-');
    await frameWith(lastFrame, 'runner slots: 1', 'run: 2/9 slots on 3 machines');
    expect([a, b, here].map((r) => f.state.runners.get(r.id)?.slots)).toEqual([4, 4, 1]);
  });

  it('runLine: nothing without a backlog or a runner; short and full forms', () => {
    const base = { jobs: [], stale: {}, backlog: { ready: [], blocked: [] }, runner: null };
    expect(runLine(base)).toBeNull();
    expect(runLine({ ...base, runner: { ids: [1], localPids: [2], slots: 3 } })).toEqual({
      full: 'run: 0/3 slots · 0 ready · 0 blocked',
      short: 'run: 0/3',
    });
    const two = {
      ids: [1],
      localPids: [],
      slots: 3,
      hosts: [
        { host: 'a', slots: 3 },
        { host: 'b', slots: 1 },
      ],
    };
    expect(runLine({ ...base, runner: two })).toEqual({
      full: 'run: 0/4 slots on 2 machines · 0 ready · 0 blocked',
      short: 'run: 0/4',
    });
  });
});
