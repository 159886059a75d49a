// Issue 29, in a real terminal at 100×30: a real job on the scripted agent in
// `[agent] permissions = "ask"` asks to run a command; the board shows it in
// Needs you (and rings the bell, running [notify] command once); enter shows
// the question, y allows it, and the job carries on to completion, the
// agent having run the command it was allowed.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { JobFixture, jobIdFrom } from '../helpers/job.js';
import { runningIn } from '../helpers/procs.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { waitFor } from '../helpers/tmp.js';

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

it.skipIf(!hasTmux)(
  'a job in ask mode waits in Needs you; enter shows the question, y allows it and the job completes',
  async () => {
    f = new JobFixture('ii-dash-ask-');
    const notified = join(f.tmp.path, 'notified.txt');
    const notify = join(f.tmp.path, 'notify.mjs');
    writeFileSync(
      notify,
      `import { appendFileSync } from 'node:fs'; appendFileSync(${JSON.stringify(notified)}, process.env.II_JOB_ID + ' ' + process.env.II_QUESTION + '\\n');`,
    );
    f.setup(['test -f asked.txt'], {
      agent: `preset = "scripted"\npermissions = "ask"\n`,
      job: `baseline-tests = false\n\n[notify]\ncommand = ${JSON.stringify([process.execPath, notify])}\n`,
    });
    const scenario = f.scenario('ask', {
      implement: [
        { actions: [{ type: 'permission', command: 'echo allowed > asked.txt' }] },
        { actions: [] },
      ],
    });
    const env = { ...(f.env as Record<string, string>), NO_COLOR: '1' };
    t = new Tmux(f.tmp.path);
    t.start([process.execPath, II, 'dashboard'], { cwd: f.repo, env, columns: 100, rows: 30 });
    await t.screenWith('incrementum · Jobs');

    const run = f.spawn(['job', 'do', '--title', 'Ask before running', '--no-edit'], scenario);
    await t.screenWith('Needs you (1)', '1 needs you', 'needs you: execute');
    const id = await waitFor(() => jobIdFrom(run.stderr()) || null, 'the job id', 10_000, 50);
    // ii job list says waiting; the notify command ran once for the request.
    expect(f.run(['job', 'list']).stdout).toContain('waiting');
    await waitFor(() => existsSync(notified) || null, 'the notify command', 10_000, 50);

    t.send('Enter');
    await t.screenWith('Tool: execute', 'echo allowed > asked.txt', 'The agent offered:', 'y allow');
    t.send('y');
    await t.screenWith('allowed once');
    expect(await run.exit).toBe(0);
    const job = f.show(id);
    expect(job.status).toBe('completed');
    const lines = readFileSync(notified, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${id} needs you: execute echo allowed > asked.txt`);
    await t.screenWith('Done (1)', '1 change');
    t.send('q');
  },
  120_000,
);
