// `ii demo` on a terminal (tmux): the dashboard it opens says in its header
// that the jobs run on the built-in scripted agent (issue 8: the scripted
// agent is labelled as such on screen), in colour only when colour is allowed.
// Quitting the dashboard ends the demo, which leaves nothing behind.
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_BANNER } from '../../src/cli/demo/run.js';
import { II } from '../helpers/cli.js';
import { runningIn } from '../helpers/procs.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { tempDir, waitFor } from '../helpers/tmp.js';

const cleanups: (() => void)[] = [];
afterEach(() =>
  cleanups
    .splice(0)
    .reverse()
    .forEach((c) => c()),
);

/** An SGR sequence that sets a foreground or background colour (30–37, 38;…, 40–47, 48;…, 90–97, 100–107). */
// eslint-disable-next-line no-control-regex
const COLOUR = /\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m/;

describe.skipIf(!hasTmux)('ii demo on a terminal', () => {
  it.each([
    { name: 'in colour', env: {} as Record<string, string>, colour: true },
    { name: 'with NO_COLOR set', env: { NO_COLOR: '1' } as Record<string, string>, colour: false },
  ])('labels the scripted agent in the dashboard header at 80×24, $name', async ({ env, colour }) => {
    const tmp = tempDir('ii-demo-tmux-');
    cleanups.push(tmp.cleanup);
    // The demo makes its throwaway dir under TMPDIR: ours, to see it go.
    const tmpdir = join(tmp.path, 'tmp');
    mkdirSync(tmpdir);
    const t = new Tmux(tmp.path);
    cleanups.push(() => t.kill());
    t.start([process.execPath, II, 'demo', '--pace', '0'], {
      cwd: tmp.path,
      columns: 80,
      rows: 24,
      env: {
        HOME: tmp.path,
        TMPDIR: tmpdir,
        // A terminal that can show colour even under CI: only NO_COLOR may turn it off.
        FORCE_COLOR: '1',
        CI: 'true',
        PATH: process.env.PATH ?? '',
        ...env,
      },
    });
    const screen = await t.screenWith(`incrementum · Jobs · ${DEMO_BANNER}`, '? help');
    expect(screen.split('\n').every((l) => l.length <= 80)).toBe(true);
    const styled = t.captureStyled();
    const header = styled.split('\n').find((l) => l.includes('scripted agent'))!;
    if (colour) {
      expect(header).toMatch(COLOUR);
      // eslint-disable-next-line no-control-regex
      expect(styled).toMatch(/\x1b\[[0-9;]*33[0-9;]*m[^\x1b]*demo · built-in scripted agent/);
    } else expect(styled).not.toMatch(COLOUR);

    t.send('q');
    await t.exitStatus();
    // The demo's dir is removed before it exits (node keeps its compile cache beside it).
    expect(readdirSync(tmpdir).filter((n) => n.startsWith('ii-demo-'))).toEqual([]);
    await waitFor(() => runningIn(tmp.path).length === 0, 'no process of the demo left', 20_000);
  });
});
