// Issue 26 item 7, in a real terminal at 80×24: `a` on a job while the
// backlog runner runs says what happens to the todo (back to the backlog,
// where the runner starts it again), and `x` in that question abandons the
// job and closes the todo, so the runner never starts it again: a second
// todo goes through the same runner meanwhile, and the closed one keeps its
// one abandoned job. Every job is a real detached runner on the scripted agent.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { JobFixture } from '../helpers/job.js';
import { runningIn } from '../helpers/procs.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { waitFor } from '../helpers/tmp.js';
import { shortJobId } from '../../src/model/job-id.js';

let f: JobFixture;
let t: Tmux | null = null;
afterEach(() => {
  t?.kill();
  t = null;
  for (const pid of runningIn(f.tmp.path))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  f.cleanup();
});

/** The screen with the question box's borders and line breaks gone, so a wrapped sentence reads whole. */
const flat = (screen: string) =>
  screen
    .split('\n')
    .map((l) => l.replace(/^\s*[│╭╰]/, '').replace(/[│╮╯]\s*$/, ''))
    .join(' ')
    .replace(/\s+/g, ' ');

it.skipIf(!hasTmux)(
  'at 80×24, a says the runner starts the todo again; x abandons the job and closes the todo, which no runner takes',
  async () => {
    f = new JobFixture('ii-dash-abandon-');
    f.setup();
    const scenarios = join(f.tmp.path, 'scenarios');
    mkdirSync(scenarios);
    // Any todo: a file, then nothing more to change.
    writeFileSync(
      join(scenarios, 'default.json'),
      JSON.stringify({
        implement: [{ actions: [{ type: 'write', path: 'work.txt', content: 'done\n' }] }, { actions: [] }],
      }),
    );
    const env = { ...(f.env as Record<string, string>), NO_COLOR: '1', II_SCRIPTED_SCENARIO: scenarios };
    const json = <T>(...args: string[]) => JSON.parse(f.run([...args, '--json']).stdout) as T;
    type JobRow = { id: string; todo_id: string; status: string };
    const stuck = f.run(['todo', 'create', '--title', 'Stuck in a long turn']).stdout.trim();
    // Its agent stays in one long turn until the job is abandoned.
    writeFileSync(
      join(scenarios, `${stuck}.json`),
      JSON.stringify({ implement: [{ actions: [{ type: 'delay', ms: 300_000 }] }] }),
    );

    t = new Tmux(f.tmp.path);
    t.start([process.execPath, II, 'dashboard'], { cwd: f.repo, env, columns: 80, rows: 24 });
    await t.screenWith('incrementum · Jobs');
    t.send('R');
    await t.screenWith('backlog runner started');
    const job = await waitFor(
      () => json<JobRow[]>('job', 'list', '--all').find((j) => j.todo_id === stuck && j.status === 'active'),
      'the stuck todo’s job to start',
      30_000,
      100,
    );
    await t.screenWith(shortJobId(job.id), 'implementing');

    // ── a: the question says the runner would start the todo again ──────
    t.send('a');
    const asked = await waitFor(
      () => {
        const s = flat(t!.capture());
        return s.includes('x abandon and close the todo') ? s : null;
      },
      'the abandon question',
      20_000,
      50,
    );
    expect(asked).toContain(`Abandon job ${shortJobId(job.id)}?`);
    expect(asked).toContain(
      'Its todo “Stuck in a long turn” goes back to the backlog and the runner will start it again. y/n',
    );

    // ── x: abandoned, and the todo closed ──────────────────────────────
    t.send('x');
    await t.screenWith('abandon requested');
    await waitFor(
      () => json<JobRow>('job', 'show', job.id).status === 'abandoned' || null,
      'the job abandoned by its runner',
      30_000,
      100,
    );
    expect(json<{ id: string }[]>('todo', 'list', '--status', 'closed').map((x) => x.id)).toEqual([stuck]);

    // The runner goes on: a new todo runs to the end, and by then it has
    // looked at the store again and again without taking the closed one.
    const quick = f.run(['todo', 'create', '--title', 'Quick one']).stdout.trim();
    await waitFor(
      () => json<{ id: string }[]>('todo', 'list', '--status', 'done').some((x) => x.id === quick) || null,
      'the quick todo done',
      60_000,
      100,
    );
    expect(
      json<JobRow[]>('job', 'list', '--all')
        .filter((j) => j.todo_id === stuck)
        .map((j) => j.status),
    ).toEqual(['abandoned']);
    expect(json<{ status: string }>('todo', 'show', stuck).status).toBe('closed');

    // ── R stops the runner, q quits: nothing left running ───────────────
    t.send('R');
    await t.screenWith('Stop the backlog runner');
    t.send('y');
    await waitFor(() => (t!.capture().includes('slots') ? null : true), 'the runner to end', 30_000, 100);
    t.send('q');
    expect(await t.exitStatus()).toBe(0);
    await waitFor(
      () => (runningIn(f.tmp.path).length === 0 ? true : null),
      'every process to end',
      30_000,
      100,
    );
  },
  180_000,
);
