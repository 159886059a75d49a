// The notification when a job starts waiting: the bell once per request and
// the [notify] command once, with the job, title and question in its
// environment (escaped), never twice, ended when it overruns.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { AskNotifier, BELL } from '../../src/dashboard/io/notify.js';
import { dashFixture, makeJob, REPO, type DashFixture } from '../helpers/dash-fixture.js';
import { CONTROLS, expectNoControl } from '../helpers/hostile.js';
import { waitFor } from '../helpers/tmp.js';
import { isRunning } from '../helpers/procs.js';

let fx: DashFixture | null = null;
let notifier: AskNotifier | null = null;
afterEach(async () => {
  await notifier?.close();
  notifier = null;
  await fx?.cleanup();
  fx = null;
});

const ask = (cmd: string) => ({
  tool_kind: 'execute',
  title: `Run ${cmd}`,
  command: cmd,
  paths: [],
  diff_preview: null,
  options: [{ id: 'once', name: 'Allow once', kind: 'allow_once' }],
});

it('a request that starts waiting rings once and runs the command once, with its env', async () => {
  fx = dashFixture();
  const f = fx;
  const out = join(f.dir, 'notified.jsonl');
  const script = join(f.dir, 'notify.mjs');
  writeFileSync(
    script,
    `import { appendFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(out)}, JSON.stringify({ id: process.env.II_JOB_ID, title: process.env.II_TODO_TITLE, q: process.env.II_QUESTION }) + '\\n');`,
  );
  let bells = '';
  notifier = new AskNotifier({
    config: { bell: true, command: [process.execPath, script] },
    bell: () => void (bells += BELL),
  });
  const before = makeJob(f.state, { title: 'waited before the board' });
  f.state.asks.open(before.id, ask('ls'));
  const titles = () => Object.fromEntries(f.state.todos.list(REPO).map((t) => [t.id, t.title]));
  const jobs = () => f.state.jobs.list(REPO);
  notifier.update(jobs(), titles());
  const job = makeJob(f.state, { title: `deploy ${CONTROLS.clear}` });
  notifier.update(jobs(), titles());
  expect(bells).toBe('');
  f.state.asks.open(job.id, ask(`rm -rf / ${CONTROLS.title}`));
  notifier.update(jobs(), titles());
  notifier.update(jobs(), titles());
  notifier.update(jobs(), titles());
  expect(bells).toBe(BELL);
  await waitFor(() => existsSync(out), 'the notify command to run', 10_000, 20);
  // Give it the chance to run twice, were it to.
  notifier.update(jobs(), titles());
  await notifier.close();
  const lines = readFileSync(out, 'utf8').trim().split('\n');
  expect(lines).toHaveLength(1);
  const got = JSON.parse(lines[0]!) as { id: string; title: string; q: string };
  expect(got.id).toBe(job.id);
  expect(got.title).toContain('deploy');
  expect(got.q).toContain('needs you: execute rm -rf /');
  expectNoControl(got.title + got.q, 'the notify environment');
});

it('bell = false rings nothing; a command that overruns is ended with its group', async () => {
  fx = dashFixture();
  const f = fx;
  const pidFile = join(f.dir, 'pid');
  const script = join(f.dir, 'hang.mjs');
  writeFileSync(
    script,
    `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`,
  );
  let bells = 0;
  notifier = new AskNotifier({
    config: { bell: false, command: [process.execPath, script] },
    bell: () => void bells++,
    timeoutMs: 200,
  });
  const jobs = () => f.state.jobs.list(REPO);
  notifier.update(jobs(), {});
  const job = makeJob(f.state, { title: 'hangs' });
  f.state.asks.open(job.id, ask('npm test'));
  notifier.update(jobs(), {});
  const pid = await waitFor(
    () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : null),
    'the command to start',
    10_000,
    20,
  );
  await waitFor(() => !isRunning(pid), 'the overrunning command to be ended', 10_000, 20);
  expect(bells).toBe(0);
});
