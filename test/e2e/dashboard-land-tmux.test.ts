// Landing from the board (issue [land]): `m` on a completed job asks first,
// saying where and what; `n` lands nothing; `y` starts a detached `ii job
// land` whose card moves to Landed and says where, with the branch really
// moved (onto a trunk that moved meanwhile). A landing refused because the
// user's checkout holds uncommitted edits in the job's files says why on the
// card, and the checkout keeps every byte.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { JobFixture, jobIdFrom, write } from '../helpers/job.js';
import { runningIn } from '../helpers/procs.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
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

/** Runs a job that writes `files` to its end and returns its id. */
function runJob(name: string, files: Record<string, string>): string {
  const s = f.scenario(name, {
    implement: [{ actions: Object.entries(files).map(([p, c]) => write(p, c)) }],
    'commit-message': [{ actions: [{ type: 'commit_message', text: `${name}: work` }] }],
  });
  const r = f.run(['job', 'do', '--title', name], s);
  expect(r.code, r.stderr).toBe(0);
  return jobIdFrom(r.stderr);
}

it.skipIf(!hasTmux)(
  'm lands a completed job from the board: asks, lands in the background, the card moves to Landed; a refusal shows on the card',
  async () => {
    f = new JobFixture('ii-dash-land-');
    f.setup();
    const id = runJob('first', { 'hello.txt': 'hi\n' });
    // The trunk moves after the job began: the landing rebases onto it.
    writeFileSync(join(f.repo, 'other.txt'), 'other\n');
    f.git('add', 'other.txt');
    f.git('commit', '-qm', 'someone else');
    const trunk = f.git('rev-parse', 'main').trim();

    t = new Tmux(f.tmp.path);
    t.start([process.execPath, II, 'dashboard'], {
      cwd: f.repo,
      env: { ...(f.env as Record<string, string>), NO_COLOR: '1' },
      columns: 120,
      rows: 30,
    });
    await t.screenWith('Done (1)', 'first');
    t.send('m');
    await t.screenWith(`Land job ${shortJobId(id)} on main: 1 commit`, 'first: work', 'tested there');
    t.send('n');
    await t.screenWith('nothing landed');
    expect(f.git('rev-parse', 'main').trim()).toBe(trunk);

    t.send('m');
    await t.screenWith(`Land job ${shortJobId(id)} on main`);
    t.send('y');
    await t.screenWith('Land (1)', 'landed on main');
    const landed = f.show(id) as unknown as { landed: { commit: string; tested: boolean } | null };
    expect(landed.landed?.tested).toBe(true);
    expect(f.git('rev-parse', 'main').trim()).toBe(landed.landed!.commit);
    expect(f.git('rev-parse', 'main^').trim()).toBe(trunk);
    expect(readFileSync(join(f.repo, 'hello.txt'), 'utf8')).toBe('hi\n');

    // A second job edits README.md, which the user is editing too: refused.
    const second = runJob('second', { 'README.md': '# r, by the job\n' });
    writeFileSync(join(f.repo, 'README.md'), '# my unsaved edit\n');
    const before = f.git('rev-parse', 'main').trim();
    await t.screenWith('Done (1)', 'second');
    // The cursor stayed on the landed card; the second one is a column left.
    t.send('Left');
    t.send('m');
    await t.screenWith(`Land job ${shortJobId(second)} on main`);
    t.send('y');
    await t.screenWith('not landed: main is checked out in');
    expect(f.git('rev-parse', 'main').trim()).toBe(before);
    expect(readFileSync(join(f.repo, 'README.md'), 'utf8')).toBe('# my unsaved edit\n');
    expect(f.run(['job', 'show', second]).stdout).toMatch(/landed: +no: main is checked out in/);

    t.send('q');
    expect(await t.exitStatus()).toBe(0);
  },
  90_000,
);
