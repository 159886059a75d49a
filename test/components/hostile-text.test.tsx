// No frame of the dashboard carries a control character or a secret from an
// agent or a test: a real job (the built CLI, the scripted ACP agent) whose
// messages, plan, file names and contents, commit message, test output and
// review carry ESC[2J, an OSC title, a C1 CSI, BEL, a bare CR and secrets,
// kept running so its live pane, log and files are shown, then every view.
import { render } from 'ink-testing-library';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Dashboard } from '../../components/Dashboard.js';
import { createActions } from '../../src/dashboard/io/actions.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { DashboardSync } from '../../src/dashboard/io/sync.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { frameWith, frameWithout, inputReady, KEY } from '../helpers/dash-fixture.js';
import {
  CONTROLS,
  expectNoControl,
  expectNoSecret,
  HOSTILE,
  SECRET_TEXT,
  SHOWN_BIDI,
  SHOWN_CLEAR,
} from '../helpers/hostile.js';
import { JobFixture, verdict, write, type RunningJob } from '../helpers/job.js';
import { waitFor } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

const SAY = `${HOSTILE}\n${SECRET_TEXT}`;
const NOISY_TEST = String.raw`printf 'out \033[2J\033]0;t\007 \302\233x\rFORGED\nMY_API_KEY=plainvalue42\n'`;

let fx: JobFixture;
let job: RunningJob;
let state: StateStore;
let jobId = '';

beforeAll(async () => {
  fx = new JobFixture('ii-hostile-dash-');
  fx.setup([NOISY_TEST]);
  const s = fx.scenario('hostile', {
    implement: [
      {
        actions: [
          { type: 'plan', entries: [HOSTILE] },
          { type: 'message', text: SAY },
          write(`evil\nname${CONTROLS.clear}.txt`, `${SAY}\n`),
          write(CONTROLS.bidi, 'x\n'),
          // Two names that are not UTF-8: bad-<0xff>.txt and bad-<0xfe>.txt.
          {
            type: 'shell',
            command: String.raw`printf x > "$(printf 'bad-\377.txt')" && printf y > "$(printf 'bad-\376.txt')"`,
          },
          { type: 'commit_message', text: `feat: ${HOSTILE}\n\n${SECRET_TEXT}` },
        ],
      },
      // The second pass talks, then stays busy, so the job is active while the views are checked.
      {
        actions: [
          { type: 'message', text: `${SECRET_TEXT}\nsecond pass ${HOSTILE}` },
          { type: 'delay', ms: 120_000 },
        ],
      },
    ],
    review: [verdict('REQUEST_CHANGES', `review ${SAY}`)],
  });
  job = fx.spawn(['job', 'do', '--title', `title ${HOSTILE} MY_API_KEY=plainvalue42`], s);
  state = openStateStore({ dir: join(fx.env.XDG_STATE_HOME!, 'incrementum') });
  // Until the second implement pass has said its piece.
  jobId = await waitFor(
    () => {
      const j = state.jobs.listAll({ activeOnly: true })[0];
      const reviewed = j?.changes[0]?.commits[0]?.review;
      return j && reviewed && j.agent_sessions.length >= 3 ? j.id : null;
    },
    `the job to be reviewed and implementing again (stderr: ${job.stderr()})`,
    60_000,
    100,
  );
});

afterAll(async () => {
  job.child.kill('SIGINT');
  await job.exit;
  state.close();
  fx.cleanup();
});

it('every view of the dashboard shows the text escaped and redacted', async () => {
  const dash = createDashboardStore({ repo: null, repoLabel: fx.repo, color: false });
  const sync = new DashboardSync({ state, dash });
  const actions = createActions({
    state: asyncStore(state),
    read: state,
    dash,
    repoRoot: fx.repo,
    quit: () => {},
  });
  sync.loadAll();
  sync.start();
  await sync.ready();
  const app = render(<Dashboard store={dash} actions={actions} size={{ columns: 200, rows: 40 }} />);
  try {
    await inputReady(app);
    const frames: [string, string][] = [];
    const view = async (name: string, ...texts: string[]) => {
      const f = await waitFor(
        () => {
          const f = app.lastFrame() ?? '';
          return texts.every((t) => f.includes(t)) ? f : null;
        },
        `the ${name} view showing ${texts.join(', ')}`,
        20_000,
        50,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\nlast frame:\n${app.lastFrame() ?? ''}`);
      });
      frames.push([name, f]);
    };
    /** Esc, then the overlay is gone (a key sent with the esc would read as alt+key). */
    const close = async (title: string) => {
      app.stdin.write(KEY.esc);
      await frameWithout(app.lastFrame, title);
    };
    // The board, with the live pane of the running job: the card's title and the agent's words.
    await view('board', `title hostile ${SHOWN_CLEAR}`, `second pass hostile ${SHOWN_CLEAR}`);
    app.stdin.write('l');
    await view('log', 'Log of job', `second pass hostile ${SHOWN_CLEAR}`);
    await close('Log of job');
    app.stdin.write('f');
    await view('files', 'Modified files', `evil\\nname${SHOWN_CLEAR}.txt`, SHOWN_BIDI);
    await close('Modified files');
    app.stdin.write('d');
    await view('diff', 'Iteration diff', `+hostile ${SHOWN_CLEAR}`, 'bad-\\xfe.txt', 'bad-\\xff.txt');
    await close('Iteration diff');
    app.stdin.write(KEY.enter);
    await view('changes', `job ${jobId}`, `title hostile ${SHOWN_CLEAR}`);
    await frameWith(app.lastFrame, 'Jobs › job');
    app.stdin.write(KEY.enter);
    await view('commits', 'change 1', `feat: hostile ${SHOWN_CLEAR}`);
    await frameWith(app.lastFrame, '› change 1');
    app.stdin.write(KEY.enter);
    await view('detail', `review hostile ${SHOWN_CLEAR}`, 'draft message:', 'MY_API_KEY=[REDACTED]');
    // Down to the code diff at its end.
    for (let i = 0; i < 40; i++) app.stdin.write('j');
    await view('detail, scrolled', `+hostile ${SHOWN_CLEAR}`);

    for (const [name, f] of frames) {
      expectNoControl(f, `the ${name} view`);
      expectNoSecret(f, `the ${name} view`);
    }
    expect(frames.map(([n]) => n)).toHaveLength(8);
  } finally {
    app.unmount();
    await sync.close();
  }
});

it('a frame with the raw text would fail the check (the check can fail)', () => {
  expect(() => expectNoControl(`x ${CONTROLS.c1}`, 'probe')).toThrow(/U\+009b/);
  expect(() => expectNoControl(CONTROLS.bidi, 'probe')).toThrow(/U\+202e/);
  expect(() => expectNoSecret(SECRET_TEXT, 'probe')).toThrow();
});
