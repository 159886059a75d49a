// bin/ii.js started by a Node older than 24 (the README's usual setup, with
// the machine's Node first on PATH) re-runs ii on the pinned Node and must
// stand for it: in a real terminal (tmux, an interactive bash with job
// control), Ctrl-C, a second Ctrl-C, and a kill sent to the launcher alone
// end ii as they would without the launcher, the shell gets its prompt back
// only when nothing of ii is left, and `$?` is ii's own exit status.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { jobIdFrom, JobFixture } from '../helpers/job.js';
import { runningIn, runningWith } from '../helpers/procs.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { waitFor } from '../helpers/tmp.js';

/** The first `node` on PATH (or in the usual places) older than 24, as the launcher's users have. */
function olderNode(): { path: string; version: string } | null {
  const found = spawnSync('which', ['-a', 'node'], { encoding: 'utf8' }).stdout ?? '';
  const candidates = [...found.split('\n').filter(Boolean), '/usr/local/bin/node', '/usr/bin/node'];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    const version = spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
    const major = Number(/^v(\d+)\./.exec(version)?.[1]);
    if (major && major < 24) return { path, version };
  }
  return null;
}

const OLD = olderNode();
const why = !hasTmux ? 'tmux is not installed' : !OLD ? 'no Node older than 24 is installed' : null;

const cleanups: (() => void)[] = [];
afterEach(() =>
  cleanups
    .splice(0)
    .reverse()
    .forEach((c) => c()),
);

const exeOf = (pid: number): string => {
  try {
    return realpathSync(readlinkSync(`/proc/${pid}/exe`));
  } catch {
    return '';
  }
};
const ppidOf = (pid: number): number => {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return -1; // gone meanwhile
  }
};

/** A repo whose job's agent stays in its implement turn for two minutes, a terminal, and bash in it. */
async function slowJobInTerminal(name: string) {
  const f = new JobFixture(`ii-launcher-${name}-`);
  cleanups.push(() => f.cleanup());
  f.setup();
  const s = f.scenario('slow', { implement: [{ actions: [{ type: 'delay', ms: 120_000 }] }] });
  const t = new Tmux(f.tmp.path);
  cleanups.push(() => t.kill());
  t.start(['bash', '--norc', '--noprofile', '-i'], {
    cwd: f.repo,
    columns: 160,
    rows: 40,
    env: {
      ...(Object.fromEntries(Object.entries(f.env).filter(([, v]) => v !== undefined)) as Record<
        string,
        string
      >),
      II_SCRIPTED_SCENARIO: s,
      NO_COLOR: '1',
      PS1: 'PROMPT$ ',
      HISTFILE: '/dev/null',
      OLD_NODE: OLD!.path,
      II,
      PATH: process.env.PATH ?? '',
    },
  });
  await t.screenWith('PROMPT$');
  const shells = () => {
    let pane = -1;
    try {
      pane = Number(t.get('#{pane_pid}'));
    } catch {} // the terminal is gone, and its shells with it
    return new Set([pane, ...runningIn(f.tmp.path).filter((p) => ppidOf(p) === pane)]);
  };
  // What of ii is still alive, whoever its parent is now: the launcher, the
  // real ii and its agent all run in this test's dir (the repo, the workspace).
  const leftovers = () => {
    const own = shells();
    return runningIn(f.tmp.path).filter((p) => !own.has(p));
  };
  // Cleans up after a test that failed half-way: our processes, by pid.
  cleanups.push(() => {
    for (const p of leftovers())
      try {
        process.kill(p, 'SIGKILL');
      } catch {}
  });
  const oldExe = realpathSync(OLD!.path);
  /** The launcher (the old Node running bin/ii.js) and the real ii it started, once both run. */
  const pids = () =>
    waitFor(
      () => {
        const ii = runningWith(II).filter((p) => runningIn(f.tmp.path).includes(p));
        const launcher = ii.find((p) => exeOf(p) === oldExe);
        const real = ii.find((p) => p !== launcher && launcher !== undefined && ppidOf(p) === launcher);
        return launcher && real ? { launcher, real } : null;
      },
      'the launcher and the real ii to run',
      30_000,
      50,
    );
  return { f, t, leftovers, pids };
}

/** The exit status bash printed after ii, read as soon as the line shows, with what was alive then. */
async function statusAfter(t: Tmux, leftovers: () => number[]): Promise<{ rc: number; left: number[] }> {
  const screen = await waitFor(
    () => /^rc=\d+$/m.exec(t.capture()),
    'ii to end (rc= in the pane)',
    60_000,
    20,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\nlast screen:\n${t.capture()}`);
  });
  return { rc: Number(screen[0].slice(3)), left: leftovers() };
}

const count = (text: string, what: string) => text.split(what).length - 1;

describe.skipIf(why !== null)(`bin/ii.js on ${OLD?.version ?? `an older Node (skipped: ${why})`}`, () => {
  it(
    'Ctrl-C ends ii job do once: exit 1, no process left when the prompt returns',
    { timeout: 120_000 },
    async () => {
      const { f, t, leftovers, pids } = await slowJobInTerminal('ctrl-c');
      t.send('"$OLD_NODE" "$II" job do --title slow; echo "rc=$?"', 'Enter');
      await t.screenWith('→ implementing');
      await pids();
      await waitFor(
        () => runningWith('scripted/main.js').some((p) => runningIn(f.tmp.path).includes(p)),
        'the agent to start',
        30_000,
        50,
      );
      t.send('C-c');
      const { rc, left } = await statusAfter(t, leftovers);
      expect(left, 'processes of ii alive after the shell had its status').toEqual([]);
      expect(rc).toBe(1);
      const screen = t.capture();
      // The terminal's SIGINT reached ii once: the launcher did not send it a second one.
      expect(count(screen, 'SIGINT: stopping the job'), screen).toBe(1);
      const job = f.show(jobIdFrom(screen.replace(/\n/g, ' ')));
      expect(job.status).toBe('failed');
      expect(job.failure_reason).toMatch(/interrupted \(SIGINT\)/);
      // Nothing written after the shell's status line.
      expect(screen.slice(screen.indexOf('rc=1')).trim()).toBe('rc=1\nPROMPT$');
    },
  );

  it(
    'a second Ctrl-C while ii run stops is the one that abandons its jobs',
    { timeout: 120_000 },
    async () => {
      const { f, t, leftovers, pids } = await slowJobInTerminal('run');
      f.run(['todo', 'create', '--title', 'slow todo']);
      t.send('"$OLD_NODE" "$II" run --jobs 1; echo "rc=$?"', 'Enter');
      // Its job under way (the status line shows its stage), so there is a job to abandon.
      await t.screenWith('slow todo · implementing');
      await pids();
      t.send('C-c');
      await t.screenWith('stopping: no new jobs. 1 still running', 'Ctrl-C again abandons');
      // One Ctrl-C must not read as two (the launcher passing on the terminal's SIGINT).
      expect(t.capture()).not.toContain('abandoning');
      t.send('C-c');
      await t.screenWith('abandoning the jobs this run started', 'asked 1 job to abandon');
      const { rc } = await statusAfter(t, leftovers);
      expect(rc).toBe(1);
      // The job's runner is a process of its own that ii run leaves to end its job.
      await waitFor(() => leftovers().length === 0, 'the abandoned job to end', 60_000, 100);
    },
  );

  for (const sig of ['SIGTERM', 'SIGHUP'] as const)
    it(
      `kill -${sig.slice(3)} <launcher pid> reaches ii: it stops the job, exit 1, nothing left`,
      { timeout: 120_000 },
      async () => {
        const { f, t, leftovers, pids } = await slowJobInTerminal(sig.toLowerCase());
        t.send('"$OLD_NODE" "$II" job do --title slow; echo "rc=$?"', 'Enter');
        await t.screenWith('→ implementing');
        const { launcher } = await pids();
        // To the launcher alone, as `kill <pid>` or a supervisor sends it.
        process.kill(launcher, sig);
        const { rc, left } = await statusAfter(t, leftovers);
        expect(left, 'processes of ii alive after the shell had its status').toEqual([]);
        expect(rc).toBe(1);
        const job = f.show(jobIdFrom(t.capture().replace(/\n/g, ' ')));
        expect(job.failure_reason).toMatch(new RegExp(`interrupted \\(${sig}\\)`));
      },
    );

  it(
    'a closed terminal (SIGHUP to the launcher and ii alike) stops the job, nothing left',
    { timeout: 120_000 },
    async () => {
      const { f, t, pids } = await slowJobInTerminal('hangup');
      t.send('"$OLD_NODE" "$II" job do --title slow; echo "rc=$?"', 'Enter');
      await t.screenWith('→ implementing');
      await pids();
      const id = jobIdFrom(t.capture().replace(/\n/g, ' '));
      t.kill();
      // The shells go with the terminal: nothing at all is left in the test's dir.
      await waitFor(() => runningIn(f.tmp.path).length === 0, 'no process of ii left', 60_000, 100);
      const job = f.show(id);
      expect(job.status).toBe('failed');
      expect(job.failure_reason).toMatch(/interrupted \(SIGHUP\)/);
    },
  );

  // SIGUSR2 is one the launcher itself listens for (to pass it on): it must let go of it to be ended by it.
  for (const [sig, n] of [
    ['SIGKILL', 9],
    ['SIGUSR2', 12],
  ] as const)
    it(`ii ended by ${sig} ends the launcher by the same signal`, { timeout: 120_000 }, async () => {
      const { t, leftovers, pids } = await slowJobInTerminal(sig.toLowerCase());
      t.send('"$OLD_NODE" "$II" job do --title slow; echo "rc=$?"', 'Enter');
      await t.screenWith('→ implementing');
      const { real } = await pids();
      process.kill(real, sig);
      const { rc } = await statusAfter(t, leftovers);
      expect(rc).toBe(128 + n);
    });
});
