// The dashboard store follows the state dir: writes from another process
// (the database, event logs, transcripts), which is how every runner reaches it.
import { execFileSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Job } from '../../src/model/job.js';
import { selectedJob, wholeJob } from '../../src/dashboard/view/board.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { DashboardSync } from '../../src/dashboard/io/sync.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { dashFixture, makeJob, REPO, type DashFixture } from '../helpers/dash-fixture.js';
import { JobFixture, jobIdFrom, verdict, write as writeFile } from '../helpers/job.js';
import { waitFor } from '../helpers/tmp.js';
import { visibleText } from '../../src/text/sanitize.js';

const WRITER = join(import.meta.dirname, '..', 'fixtures', 'dash-writer.mjs');
let fx: DashFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

const write = (f: DashFixture, ...args: string[]) => writeAt(f, 0, ...args);
/** A write from another process whose clock is `shiftMs` ahead (see the writer). */
const writeAt = (f: DashFixture, shiftMs: number, ...args: string[]) =>
  execFileSync(process.execPath, [WRITER, ...args], {
    env: { ...process.env, XDG_STATE_HOME: f.dir, DASH_WRITER_CLOCK_SHIFT_MS: String(shiftMs) },
    encoding: 'utf8',
  }).trim();

/** The job's whole record as the board holds it (these jobs are active, so whole). */
const jobOf = (f: DashFixture, id: string) => wholeJob(f.dash.getState(), id);

it('picks up jobs another process creates, moves and finishes', async () => {
  // A long fallback poll: the watcher, not the poll, must carry every change.
  fx = dashFixture({ pollMs: 60_000 });
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  const id = write(fx, 'create', REPO, 'from elsewhere');
  await waitFor(() => jobOf(fx!, id), 'the new job in the store');
  expect(fx.dash.getState().todoTitles[jobOf(fx, id)!.todo_id]).toBe('from elsewhere');
  write(fx, 'stage', id, 'testing');
  await waitFor(() => jobOf(fx!, id)?.stage === 'testing', 'the stage change');
  write(fx, 'change', id, 'Iabc');
  write(fx, 'commit', id, 'c1', 'true');
  await waitFor(() => jobOf(fx!, id)?.changes[0]?.commits[0]?.tests_passed === true, 'the commit');
  write(fx, 'event', id, 'file_change', JSON.stringify({ path: 'src/y.ts', additions: 3, deletions: 0 }));
  await waitFor(() => fx!.dash.getState().files[id]?.[0]?.path === 'src/y.ts', 'the tracked file');
  write(fx, 'event', id, 'warning', JSON.stringify({ message: 'disk nearly full' }));
  await waitFor(
    () => fx!.dash.getState().live[id]?.includes('! disk nearly full'),
    'the warning in the pane',
  );
  write(fx, 'finish', id, 'completed');
  await waitFor(() => jobOf(fx!, id)?.status === 'completed', 'the finished job');
});

it("leaves the database's file events to its fs.watch while that works, and to chokidar once it fails", async () => {
  // chokidar's lstat and event for each of a write's database files told the
  // board what the fs.watch already had (~2 ms of CPU per new todo with
  // 10,000 todos: bench/scale.bench.js).
  fx = dashFixture({ pollMs: 60_000 });
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  const inner = fx.sync as unknown as {
    watcher: { on(e: 'all', f: (event: string, path: string) => void): void };
    dbWatcher: { emit(e: 'error', err: Error): void };
  };
  const seen: string[] = [];
  inner.watcher.on('all', (_event, path) => seen.push(basename(path)));
  const id = write(fx, 'create', REPO, 'from elsewhere');
  await waitFor(() => jobOf(fx!, id), 'the new job in the store');
  // chokidar reports the job's event log after the database's writes before it.
  write(fx, 'event', id, 'warning', JSON.stringify({ message: 'after' }));
  await waitFor(() => seen.includes('events.jsonl'), "chokidar's event for the job's log");
  expect(seen.filter((f) => f.startsWith('state.db'))).toEqual([]);
  // The fs.watch fails: chokidar carries the database's writes (the poll is a minute away).
  inner.dbWatcher.emit('error', new Error('watch gone'));
  write(fx, 'stage', id, 'testing');
  await waitFor(() => jobOf(fx!, id)?.stage === 'testing', 'the stage change');
  expect(seen.some((f) => f.startsWith('state.db'))).toBe(true);
});

it('draws the live pane of the job the board shows as its logs grow, and of another job when it comes into view', () => {
  // With 32 agents streaming, drawing every job's pane on every line kept the
  // board busy for seconds per keypress (bench/scale.bench.js): only the
  // shown job's lines are drawn, the others when the cursor reaches them.
  fx = dashFixture({ pollMs: 60_000 });
  const a = makeJob(fx.state);
  const b = makeJob(fx.state);
  for (const id of [a.id, b.id])
    write(fx, 'event', id, 'warning', JSON.stringify({ message: `line of ${id}` }));
  // Reads both jobs' logs.
  fx.sync.loadAll();
  fx.sync.start();
  const shownNow = selectedJob(fx.dash.getState())!.id;
  const other = shownNow === a.id ? b.id : a.id;
  const pane = (id: string) => fx!.dash.getState().live[id] ?? [];
  expect(pane(shownNow)).toContain(`! line of ${shownNow}`);
  expect(pane(other)).toEqual([]);
  fx.dash.getState().dispatch({ type: 'move', dir: 'down' });
  expect(selectedJob(fx.dash.getState())!.id).toBe(other);
  expect(pane(other)).toContain(`! line of ${other}`);
});

it('gets every kind of job mutation from another process, though it reloads only the jobs written, whatever the clocks', async () => {
  // The sync reloads only the jobs written after the store version it has
  // seen, so each mutation must stamp its job, whatever the writers' clocks
  // say: one writer runs 10 s ahead, the next a minute behind (a clock
  // stepped back), and every write still arrives.
  fx = dashFixture({ pollMs: 60_000 });
  const s = fx.state;
  const job = () => makeJob(s);
  const withCommit = () => makeJob(s, { changes: 1, iterations: 1 });
  const cases: { args: (id: string) => string[]; id: string; done: (j: Job) => boolean }[] = [
    { id: job().id, args: (id) => ['stage', id, 'testing'], done: (j) => j.stage === 'testing' },
    {
      id: job().id,
      args: (id) => ['feedback', id, 'fix the tests'],
      done: (j) => j.feedback === 'fix the tests',
    },
    {
      id: job().id,
      args: (id) => ['session', id, 'sess-1', '/tmp/ws'],
      done: (j) => j.session_id === 'sess-1' && j.workspace_path === '/tmp/ws',
    },
    {
      id: job().id,
      args: (id) => ['agent', id, 'agent-1'],
      done: (j) => j.agent_sessions.at(-1)?.id === 'agent-1',
    },
    { id: job().id, args: (id) => ['change', id, 'Inew'], done: (j) => j.changes[0]?.change_id === 'Inew' },
    {
      id: makeJob(s, { changes: 1, iterations: 0 }).id,
      args: (id) => ['commit', id, 'c-new'],
      done: (j) => j.changes[0]?.commits[0]?.commit_id === 'c-new',
    },
    {
      id: withCommit().id,
      args: (id) => ['tested', id, 'false'],
      done: (j) => j.changes[0]?.commits[0]?.tests_passed === false,
    },
    {
      id: withCommit().id,
      args: (id) => ['review', id, 'REQUEST_CHANGES'],
      done: (j) => j.changes[0]?.commits[0]?.review?.outcome === 'REQUEST_CHANGES',
    },
    {
      id: job().id,
      args: (id) => ['project-review', id, 'ACCEPT'],
      done: (j) => j.project_review?.outcome === 'ACCEPT',
    },
    { id: job().id, args: (id) => ['usage', id, '7'], done: (j) => j.usage.input_tokens === 7 },
    { id: job().id, args: (id) => ['heartbeat', id, '999'], done: (j) => j.pid === 999 },
    { id: job().id, args: (id) => ['finish', id, 'failed'], done: (j) => j.status === 'failed' },
  ];
  const pacer = job();
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  writeAt(fx, 10_000, 'stage', pacer.id, 'reviewing');
  await waitFor(() => jobOf(fx!, pacer.id)?.stage === 'reviewing', 'the pacing write');
  for (const c of cases) {
    // The board lists the jobs it read at the start as cards: the store has the whole record.
    expect(c.done(fx.state.jobs.get(c.id)!), c.args(c.id).join(' ')).toBe(false);
    writeAt(fx, -60_000, ...c.args(c.id));
  }
  const created = writeAt(fx, -60_000, 'create', REPO, 'made later');
  for (const c of cases) {
    const what = c.args(c.id)[0]!;
    await waitFor(() => {
      const j = jobOf(fx!, c.id);
      return j && c.done(j);
    }, `the ${what} write in the store`);
  }
  await waitFor(() => jobOf(fx!, created), 'the job created later');
});

it('replaces a job reloaded with the same stamp but new content (two writes in one millisecond)', () => {
  fx = dashFixture();
  const job = makeJob(fx.state, { changes: 1, iterations: 1 });
  fx.sync.loadAll();
  // Loaded as its card; a reload gives the whole record.
  const shown = fx.state.jobs.get(job.id)!;
  fx.dash.getState().mergeJobs([shown]);
  expect(jobOf(fx, job.id)).toBe(shown);
  const later = structuredClone(shown);
  later.changes[0]!.commits[0]!.tests_passed = true;
  fx.dash.getState().mergeJobs([later]);
  const kept = jobOf(fx, job.id)!;
  expect(kept.changes[0]!.commits[0]!.tests_passed).toBe(true);
  // An equal reload keeps the shown object, so its card is not re-rendered.
  fx.dash.getState().mergeJobs([structuredClone(later)]);
  expect(jobOf(fx, job.id)).toBe(kept);
});

it('keeps unchanged jobs identical across reloads (memoized cards)', () => {
  fx = dashFixture();
  const a = makeJob(fx.state, { title: 'a' });
  const b = makeJob(fx.state, { title: 'b' });
  fx.sync.loadAll();
  const before = fx.dash.getState().jobs;
  fx.state.jobs.setStage(b.id, 'testing');
  fx.sync.refreshJobs();
  const after = fx.dash.getState().jobs;
  expect(after).not.toBe(before);
  expect(after.find((j) => j.id === a.id)).toBe(before.find((j) => j.id === a.id));
  expect(after.find((j) => j.id === b.id)!.stage).toBe('testing');
});

it('shows what `ii job do` in another process records: test results, verdicts and the commit', async () => {
  // A real job: the built CLI, the scripted ACP agent, a failing then a
  // passing test run, a review asking for changes, then one accepting.
  const jf = new JobFixture('ii-live-');
  try {
    // The test checks the agent's work, so it fails on the untouched base: no baseline run.
    jf.setup(['echo checking; test -f hello.txt || { echo hello.txt is missing >&2; exit 3; }'], {
      job: 'baseline-tests = false\n',
    });
    const s = jf.scenario('two-reviews', {
      implement: [
        { actions: [writeFile('other.txt', 'x\n')] },
        { actions: [writeFile('hello.txt', 'hi\n')] },
        { actions: [writeFile('hello.txt', 'hi there\n')] },
      ],
      review: [verdict('REQUEST_CHANGES', 'Say more.\nA second line.'), verdict('ACCEPT', 'Looks right.')],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Add hello.txt' }] }],
    });
    const state = openStateStore({ dir: join(jf.env.XDG_STATE_HOME!, 'incrementum') });
    const dash = createDashboardStore({ repo: repoSlug(jf.repo), repoLabel: jf.repo, color: false });
    const sync = new DashboardSync({ state, dash, pollMs: 60_000 });
    try {
      sync.loadAll();
      sync.start();
      await sync.ready();
      const r = await jf.runAsync(['job', 'do', '--title', 'say hello'], s);
      expect(r.code, r.stderr).toBe(0);
      const id = jobIdFrom(r.stderr);
      const sha = /committed ([0-9a-f]{10})/.exec(r.stderr)?.[1] ?? 'no commit';
      const pane = () => dash.getState().live[id] ?? [];
      await waitFor(() => pane().includes('■ job completed'), 'the end of the job in the pane');
      const text = pane().join('\n');
      // The failed run: command, exit code, duration and the output's tail.
      expect(text).toMatch(
        / {2}exit 3 \(echo checking;[^\n]*, \d+\.\ds\)\n {2}\| checking\n {2}\| hello\.txt is missing/,
      );
      expect(text).toContain('  tests failed: `echo checking;');
      expect(text).toContain('  tests passed (1 command)');
      expect(text).toContain('  review: REQUEST_CHANGES — Say more.');
      expect(text).toContain('  review: ACCEPT — Looks right.');
      expect(text).toContain(`  committed ${sha}: Add hello.txt`);
      expect(text).toContain('  project review: ACCEPT');
      // The same lines `ii job do` printed, in the same order.
      const facts = (t: string) =>
        t.split('\n').filter((l) => /^ {2}(review|project review|committed|tests)/.test(l));
      expect(facts(text)).toEqual(facts(r.stderr));
    } finally {
      await sync.close();
      state.close();
    }
  } finally {
    jf.cleanup();
  }
});

it("shows the agent's stderr lines in the live pane as they come, escaped and redacted, and says when the agent has been quiet 30 s", async () => {
  // An agent that cannot reach its model logs why on stderr and says nothing over ACP.
  const jf = new JobFixture('ii-quiet-');
  try {
    jf.setup();
    const key = ['sk-ant-', 'api03-', 'abcdefghijklmnopqrstuvwx_yz-0123456789'].join('');
    const s = jf.scenario('unreachable', {
      implement: [
        {
          actions: [
            { type: 'stderr', text: `model unreachable: connect ECONNREFUSED 127.0.0.1:9 (key ${key})` },
            { type: 'stderr', text: '\u001b[2Jretrying in 30 s' },
            { type: 'delay', ms: 120_000 },
          ],
        },
      ],
    });
    const state = openStateStore({ dir: join(jf.env.XDG_STATE_HOME!, 'incrementum') });
    const dash = createDashboardStore({ repo: repoSlug(jf.repo), repoLabel: jf.repo, color: false });
    let skew = 0;
    const sync = new DashboardSync({ state, dash, pollMs: 50, now: () => Date.now() + skew });
    const job = jf.spawn(['job', 'do', '--title', 'unreachable'], s);
    try {
      sync.loadAll();
      sync.start();
      await sync.ready();
      const active = await waitFor(
        () => dash.getState().jobs.find((j) => j.status === 'active'),
        'the job',
        60_000,
      );
      const pane = () => (dash.getState().live[active.id] ?? []).join('\n');
      // While the agent's turn goes on (it sleeps after logging), not when it has ended.
      await waitFor(() => pane().includes('retrying in 30 s'), 'the stderr lines in the pane', 60_000);
      const text = pane();
      expect(text).toContain(
        '  stderr: model unreachable: connect ECONNREFUSED 127.0.0.1:9 (key [REDACTED])',
      );
      expect(text).not.toContain(key);
      // The escape reaches the screen made visible, where lines are drawn (components/Lines.tsx).
      expect(text).toContain('  stderr: \u001b[2Jretrying in 30 s');
      expect(visibleText(text)).toContain('  stderr: \\x1b[2Jretrying in 30 s');
      expect(dash.getState().jobs.find((j) => j.id === active.id)?.status).toBe('active');
      expect(text).not.toContain('no output from the agent');
      // 45 s later by the board's clock, with nothing new from the agent.
      skew = 45_000;
      await waitFor(
        () => /\(no output from the agent for 4\d s\)$/.test(pane()),
        'the quiet agent said',
        10_000,
      );
    } finally {
      job.child.kill('SIGTERM');
      await job.exit;
      await sync.close();
      state.close();
    }
  } finally {
    jf.cleanup();
  }
}, 120_000);

it('marks a job stale when its runner is gone, and not otherwise', () => {
  fx = dashFixture({ dead: [31337] });
  const dead = makeJob(fx.state, { pid: 31337 });
  const alive = makeJob(fx.state, { pid: 1 });
  fx.sync.loadAll();
  expect(fx.dash.getState().stale).toEqual({ [dead.id]: true });
  expect(fx.dash.getState().stale[alive.id]).toBeUndefined();
});

it('keeps the Backlog column in step with todos another process creates, edits and closes, reading only those', async () => {
  // With 10,000 todos, reading them all on every new one took most of the
  // time a new todo took to reach the board (bench/scale.bench.js).
  fx = dashFixture({ pollMs: 60_000 });
  const kept = Array.from({ length: 30 }, (_, i) => fx!.state.todos.create(REPO, { title: `todo ${i}` }));
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  const titles = () => fx!.dash.getState().backlog.ready.map((t) => t.title);
  expect(titles()).toHaveLength(30);
  let fullReads = 0;
  const list = fx.state.todos.list.bind(fx.state.todos);
  fx.state.todos.list = (...args) => {
    fullReads++;
    return list(...args);
  };
  write(fx, 'todo', REPO, 'from elsewhere');
  await waitFor(() => titles().includes('from elsewhere'), 'the new todo in the Backlog');
  write(fx, 'todo-title', REPO, kept[3]!.id, 'renamed elsewhere');
  await waitFor(() => titles().includes('renamed elsewhere'), 'the edited title');
  expect(titles()).not.toContain('todo 3');
  write(fx, 'todo-close', REPO, kept[5]!.id);
  await waitFor(() => !titles().includes('todo 5'), 'the closed todo gone');
  expect(titles()).toHaveLength(30);
  expect(fullReads).toBe(0);
});

it("reads another process's write as soon as its file event comes, not a debounce later", async () => {
  // Waiting out the debounce before the first read was 20 of the ~60 ms a new
  // todo took to reach the board with 10,000 todos (bench/scale.bench.js).
  fx = dashFixture({ pollMs: 60_000, debounceMs: 60_000 });
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  const titles = () => fx!.dash.getState().backlog.ready.map((t) => t.title);
  write(fx, 'todo', REPO, 'at once');
  await waitFor(() => titles().includes('at once'), 'the new todo before the debounce ends');
});

it('reads the database again at the end of the window, for a write its file event came before', async () => {
  // A write's last file event comes just before SQLite publishes it: a read
  // at once can see the old version, and nothing else announces the new one.
  fx = dashFixture({ pollMs: 60_000, debounceMs: 50 });
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  // The next version read answers as if the write were not published yet.
  const version = fx.state.jobs.version.bind(fx.state.jobs);
  const before = version();
  let early = true;
  fx.state.jobs.version = () => {
    if (!early) return version();
    early = false;
    return before;
  };
  write(fx, 'todo', REPO, 'published late');
  await waitFor(
    () => fx!.dash.getState().backlog.ready.some((t) => t.title === 'published late'),
    'the todo, read again at the end of the window',
  );
  expect(early).toBe(false);
});

it("reads a new todo without counting the repository's todos, and the poll's count finds one that was missed", async () => {
  // Counting 10,000 todos was ~10 ms of the time a new todo took to reach the board.
  fx = dashFixture({ pollMs: 60_000 });
  fx.state.todos.create(REPO, { title: 'there' });
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  let counts = 0;
  const stamp = fx.state.todos.stamp.bind(fx.state.todos);
  fx.state.todos.stamp = (...args) => {
    counts++;
    return stamp(...args);
  };
  const titles = () => fx!.dash.getState().backlog.ready.map((t) => t.title);
  write(fx, 'todo', REPO, 'counted later');
  await waitFor(() => titles().includes('counted later'), 'the new todo');
  expect(counts).toBe(0);
  // A todo the changed-rows read misses (as if its version were lost) is found by the count.
  const changed = fx.state.todos.listChangedAfter.bind(fx.state.todos);
  fx.state.todos.listChangedAfter = (...args) => changed(...args).filter((t) => t.title !== 'missed');
  write(fx, 'todo', REPO, 'missed');
  write(fx, 'todo', REPO, 'seen');
  await waitFor(() => titles().includes('seen'), 'the todo after it');
  expect(titles()).not.toContain('missed');
  (fx.sync as unknown as { tick(): void }).tick();
  expect(counts).toBe(1);
  expect(titles()).toContain('missed');
});

it("rebuilds the Backlog column from the jobs' briefs read once, and again only after a job is written", async () => {
  // With 1,300 jobs, reading every job's brief (its commit counts) for each
  // new todo was a third of the time the todo took to reach the board.
  fx = dashFixture({ pollMs: 60_000 });
  fx.state.todos.create(REPO, { title: 'waiting' });
  fx.sync.loadAll();
  fx.sync.setMaxAttempts(1);
  fx.sync.start();
  await fx.sync.ready();
  let reads = 0;
  const briefs = fx.state.jobs.briefs.bind(fx.state.jobs);
  fx.state.jobs.briefs = (...args) => {
    reads++;
    return briefs(...args);
  };
  const ready = () => fx!.dash.getState().backlog.ready.map((t) => t.title);
  write(fx, 'todo', REPO, 'new one');
  await waitFor(() => ready().includes('new one'), 'the new todo in the Backlog');
  expect(reads).toBe(0);
  // A job written: its todo is held while it runs, then blocked on its one failed attempt.
  const job = write(fx, 'create', REPO, 'tried', String(process.pid));
  await waitFor(() => jobOf(fx!, job), 'the job on the board');
  write(fx, 'finish', job, 'failed');
  const blocked = () =>
    fx!.dash
      .getState()
      .backlog.blocked.find((b) => b.todo.title === 'tried')
      ?.blockers.map((x) => x.kind);
  await waitFor(() => blocked()?.includes('attempts'), 'the todo blocked on its failed attempt');
  expect(reads).toBeGreaterThan(0);
});

it('holds a log reader only for jobs whose event log gave a line (and the shown one), and reads a log that starts later', async () => {
  // 6,667 running jobs with nothing logged held an idle reader each: megabytes of the board's memory.
  fx = dashFixture({ pollMs: 60_000 });
  const jobs = Array.from({ length: 5 }, () => makeJob(fx!.state, { pid: process.pid }));
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  const before = fx.sync.readersHeld();
  expect(before).toBeLessThanOrEqual(1);
  const shown = selectedJob(fx.dash.getState())?.id;
  const other = jobs.find((j) => j.id !== shown)!;
  write(
    fx,
    'event',
    other.id,
    'agent_start',
    JSON.stringify({ purpose: 'implement', agent_session_id: 's1' }),
  );
  await waitFor(() => fx!.sync.readersHeld() === before + 1, 'a reader for the job that logged');
});

it('does not redraw a job whose only change is its heartbeat, and decides its staleness by the latest one', () => {
  // Every running job beats every 5 s: with 24 jobs, redrawing the whole
  // board for each (no view shows a heartbeat) was a frame a keypress's
  // could wait behind (bench/shared-store.bench.js).
  fx = dashFixture();
  const job = makeJob(fx.state, { pid: 7 });
  // Its runner is on another machine (this one's host name is not the probe's)
  // and beat a minute ago: stale.
  writeAt(fx, -60_000, 'heartbeat', job.id, '7');
  fx.sync.loadAll();
  expect(fx.dash.getState().stale[job.id]).toBe(true);
  const drawn = fx.dash.getState().jobs;
  write(fx, 'heartbeat', job.id, '7');
  fx.sync.refreshJobs();
  expect(fx.dash.getState().jobs).toBe(drawn);
  expect(fx.dash.getState().stale[job.id]).toBeUndefined();
  // A change that shows is drawn, with the latest beat.
  const beat = fx.state.jobs.get(job.id)!.heartbeat_at;
  write(fx, 'stage', job.id, 'testing');
  fx.sync.refreshJobs();
  expect(jobOf(fx, job.id)?.stage).toBe('testing');
  expect(jobOf(fx, job.id)?.heartbeat_at).toBe(beat);
  expect(fx.dash.getState().stale[job.id]).toBeUndefined();
});
