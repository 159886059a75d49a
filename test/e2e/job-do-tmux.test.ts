// `ii job do` on a terminal (tmux): the live status line is rewritten in
// place, but every stage the job went through stays in the scrollback as a
// line of its own, in order, as it does in a log.
import { afterEach, describe, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { JobFixture, write } from '../helpers/job.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';

const cleanups: (() => void)[] = [];
afterEach(() =>
  cleanups
    .splice(0)
    .reverse()
    .forEach((c) => c()),
);

describe.skipIf(!hasTmux)('ii job do on a terminal', () => {
  it('keeps its stage lines in the scrollback', { timeout: 120_000 }, async () => {
    const f = new JobFixture('ii-jobdo-tmux-');
    cleanups.push(() => f.tmp.cleanup());
    f.setup();
    const s = f.scenario('accept', {
      implement: [{ actions: [write('hello.txt', 'hi\n')] }],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Add hello.txt' }] }],
    });
    const t = new Tmux(f.tmp.path);
    cleanups.push(() => t.kill());
    t.start([process.execPath, II, 'job', 'do', '--title', 'say hello'], {
      cwd: f.repo,
      // Few rows: the early lines must scroll off the screen into the history.
      columns: 100,
      rows: 8,
      env: {
        ...(Object.fromEntries(Object.entries(f.env).filter(([, v]) => v !== undefined)) as Record<
          string,
          string
        >),
        II_SCRIPTED_SCENARIO: s,
        NO_COLOR: '1',
        PATH: process.env.PATH ?? '',
      },
    });
    expect(await t.exitStatus(60_000)).toBe(0);
    const history = t
      .tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'main')
      .split('\n')
      .map((l) => l.trimEnd());
    const stages = history.filter((l) => l.startsWith('→ '));
    // The second "implementing" asks the agent for a next change; it has none, so the project review follows.
    expect(stages).toEqual([
      '→ implementing',
      '→ testing',
      '→ reviewing',
      '→ committing',
      '→ implementing',
      '→ project review',
    ]);
    expect(history.some((l) => /completed/.test(l))).toBe(true);
  });
});
