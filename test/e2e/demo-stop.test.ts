// Stopping `ii demo` before its jobs end is the person's choice, not a
// failure: q or Ctrl-C in its dashboard, Ctrl-C on its printed progress, or
// a reader that stops reading (`ii demo --no-dashboard | head`). Each ends
// the demo with exit 0, its jobs stopped, its temp dir removed and no
// process of it left.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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

/** A temp dir with a private TMPDIR inside it, where the demo makes its throwaway dir. */
function setup(): { path: string; tmpdir: string; demoDirs: () => string[] } {
  const tmp = tempDir('ii-demo-stop-');
  cleanups.push(tmp.cleanup);
  const tmpdir = join(tmp.path, 'tmp');
  mkdirSync(tmpdir);
  return {
    path: tmp.path,
    tmpdir,
    demoDirs: () => readdirSync(tmpdir).filter((n) => n.startsWith('ii-demo-')),
  };
}

/** Waits until the demo's three runners (and so its jobs) work in its repository. */
async function jobsRunning(t: ReturnType<typeof setup>): Promise<void> {
  await waitFor(
    () => {
      const [d] = t.demoDirs();
      return d && runningIn(join(t.tmpdir, d)).length >= 3 ? true : null;
    },
    "the demo's jobs to run",
    60_000,
  );
}

describe.skipIf(!hasTmux)('ii demo on a terminal, stopped before its jobs end', () => {
  it.each([
    { name: 'q in the dashboard', args: [] as string[], key: 'q', ready: '? help' },
    { name: 'Ctrl-C in the dashboard', args: [] as string[], key: 'C-c', ready: '? help' },
    {
      name: 'Ctrl-C on its progress (--no-dashboard)',
      args: ['--no-dashboard'],
      key: 'C-c',
      ready: '[1] job ',
    },
  ])(
    '$name ends it with exit 0, its temp dir gone and no process left',
    { timeout: 180_000 },
    async ({ args, key, ready }) => {
      const t = setup();
      const tmux = new Tmux(t.path);
      cleanups.push(() => tmux.kill());
      // A slow pace: the jobs are still running when the key is pressed.
      tmux.start([process.execPath, II, 'demo', '--pace', '4', ...args], {
        cwd: t.path,
        columns: 100,
        rows: 30,
        env: { HOME: t.path, TMPDIR: t.tmpdir, PATH: process.env.PATH ?? '' },
      });
      // Generous waits: this starts four jobs, and the machine may be busy.
      await waitFor(() => tmux.capture().includes(ready), `the screen to show ${ready}`, 60_000);
      await jobsRunning(t);
      tmux.send(key);
      expect(await tmux.exitStatus(60_000)).toBe(0);
      expect(t.demoDirs()).toEqual([]);
      await waitFor(() => runningIn(t.path).length === 0, 'no process of the demo left', 60_000);
    },
  );
});

describe('ii demo --no-dashboard whose reader goes away', () => {
  it(
    'stops its jobs and removes its temp dir, exit 0, when the pipe it writes to is closed',
    { timeout: 180_000 },
    async () => {
      const t = setup();
      const demo = spawn(process.execPath, [II, 'demo', '--no-dashboard', '--pace', '4'], {
        cwd: t.path,
        env: { ...process.env, HOME: t.path, TMPDIR: t.tmpdir },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      cleanups.push(() => demo.kill('SIGKILL'));
      const exited = new Promise<number | null>((r) => demo.on('exit', (code) => r(code)));
      // Read as `head` would, then close the read end: its next write fails with EPIPE.
      let out = '';
      demo.stdout!.on('data', (b: Buffer) => (out += b.toString()));
      await waitFor(() => out.includes('agent:'), 'the first lines', 60_000);
      await jobsRunning(t);
      demo.stdout!.destroy();
      expect(await exited).toBe(0);
      expect(t.demoDirs()).toEqual([]);
      await waitFor(() => runningIn(t.path).length === 0, 'no process of the demo left', 60_000);
    },
  );
});
