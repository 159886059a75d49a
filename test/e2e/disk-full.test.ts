// A full disk, made for real: a small tmpfs holds the state dir (state.db,
// event logs, transcripts, and by default the workspaces), or only the
// workspaces, and a file of filler bytes fills it. `ii job do` on the
// scripted agent meets ENOSPC: no stack trace, a message naming the path and
// saying to free space, exit 3 when nothing can be written, else the job
// failed with "disk full: <path>"; with the filler removed the next commands
// work and show the job failed, never stale or running.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../helpers/cli.js';
import { jobIdFrom, JobFixture, write, type JobJson } from '../helpers/job.js';
import { fill, mountTmpfs, tmpfsUnavailable, unmountAll } from '../helpers/tmpfs.js';

const cannotMount = tmpfsUnavailable();
if (cannotMount) console.warn(`disk-full tests skipped: ${cannotMount}`);

let fx: JobFixture;
let stateHome: string;
let stateDir: string;
beforeEach(() => {
  fx = new JobFixture('ii-diskfull-');
  // Unsandboxed: the agent's shell fills the disk outside its workspace (in
  // the state dir), standing in for anything else on the machine doing so.
  fx.setup(undefined, { job: '\n[sandbox]\nmode = "off"\n' });
  stateHome = fx.env.XDG_STATE_HOME!;
  stateDir = join(stateHome, 'incrementum');
});
const reserve = () => join(stateDir, 'state.db-reserve');
afterEach(() => {
  unmountAll();
  fx.cleanup();
});
afterAll(() => unmountAll());

/** No stack trace and no internal error: the clear message only. */
function expectClean(r: RunResult): void {
  for (const out of [r.stdout, r.stderr]) {
    expect(out).not.toMatch(/^\s+at /m);
    expect(out).not.toContain('internal error');
    expect(out).not.toMatch(/ENOSPC|database or disk is full|disk I\/O error/);
  }
}

const jobs = (): JobJson[] => {
  const r = fx.run(['job', 'list', '--all', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as JobJson[];
};

describe.skipIf(cannotMount !== null)(
  cannotMount ? `a full disk (skipped: ${cannotMount})` : 'a full disk',
  () => {
    it('state dir full before the command: exit 3 naming state.db, then works once space is freed', () => {
      mountTmpfs(stateHome, '8m');
      expect(fx.run(['todo', 'create', '--title', 'made while there was space']).code).toBe(0);
      const filler = join(stateHome, 'filler');
      fill(filler);

      const s = fx.scenario('full', { implement: [{ actions: [write('f.txt', 'hi\n')] }] });
      const r = fx.run(['job', 'do', '--title', 'meets a full disk'], s);
      expect(r.code, r.stderr).toBe(3);
      expectClean(r);
      expect(r.stderr).toContain(`disk full: ${join(stateDir, 'state.db')}`);
      expect(r.stderr).toContain(`Free space on the filesystem holding ${stateDir}`);
      // The next command meets it too, and says the same.
      const next = fx.run(['job', 'list']);
      expect(next.code, next.stderr).toBe(3);
      expectClean(next);
      expect(next.stderr).toContain('disk full: ');

      rmSync(filler);
      expect(jobs().filter((j) => j.status !== 'completed' && j.status !== 'failed')).toEqual([]);
      const again = fx.run(['job', 'do', '--title', 'after space was freed'], s);
      expect(again.code, again.stderr).toBe(0);
      expect(jobs().map((j) => j.status)).toEqual(['completed']);
    }, 120_000);

    /** A scenario whose implement turn fills the disk (an agent's build can), then writes a file. */
    const fillsMidTurn = (filler: string, before = '') =>
      fx.scenario('fills', {
        implement: [
          {
            actions: [
              { type: 'shell', command: `${before}cat /dev/zero > '${filler}' 2>/dev/null; true` },
              write('f.txt', 'hi\n'),
            ],
          },
        ],
      });

    it('state dir filling during the job: the job is recorded failed "disk full: <path>" in the space kept for it', () => {
      mountTmpfs(stateHome, '8m');
      const filler = join(stateHome, 'filler');
      const r = fx.run(['job', 'do', '--title', 'fills the disk'], fillsMidTurn(filler));
      expectClean(r);
      expect(r.code, r.stderr).toBe(1);
      const id = jobIdFrom(r.stderr);
      expect(r.stderr).toContain(`job ${id} failed: disk full: ${stateHome}/`);
      expect(r.stderr).toContain(`Free space on the filesystem holding ${stateHome}/`);
      // The reserve was spent on it.
      expect(existsSync(reserve())).toBe(false);

      rmSync(filler);
      const list = fx.run(['job', 'list', '--all']);
      expect(list.code, list.stderr).toBe(0);
      expectClean(list);
      const job = jobs().find((j) => j.id === id)!;
      expect(job.status).toBe('failed');
      expect(job.failure_reason).toMatch(/^disk full: \//);
      expect(fx.todos('open')).toHaveLength(1);
      expect(fx.workspaces().filter((w) => w.status === 'acquired')).toEqual([]);
      const again = fx.run(['job', 'do', '--title', 'after space was freed'], fx.scenario('ok', {}));
      expect(again.code, again.stderr).toBe(0);
      expect(existsSync(reserve()), 'a job made the reserve again').toBe(true);
    }, 120_000);

    it('state dir filling during the job with no space kept: exit 3, and the next job on its todo ends it failed', () => {
      mountTmpfs(stateHome, '8m');
      const filler = join(stateHome, 'filler');
      const s = fillsMidTurn(filler, `rm -f '${reserve()}'; `);
      const r = fx.run(['job', 'do', '--title', 'fills the disk'], s);
      expectClean(r);
      expect(r.code, r.stderr).toBe(3);
      const id = jobIdFrom(r.stderr);
      expect(r.stderr).toContain(`disk full: ${join(stateDir, 'state.db')}`);
      expect(r.stderr).toContain(`Job ${id} could not be recorded as failed (disk full: `);
      expect(r.stderr).toContain('Free space on the filesystem holding');

      rmSync(filler);
      const list = fx.run(['job', 'list', '--all']);
      expect(list.code, list.stderr).toBe(0);
      expectClean(list);
      // Its runner is gone: the next job on the todo (or any cleanup of dead
      // runners before it) ends it failed, frees its workspace.
      const todo =
        (fx.todos('in_progress') as { id: string }[])[0]?.id ?? (fx.todos('open') as { id: string }[])[0]!.id;
      const again = fx.run(['job', 'do', todo], fx.scenario('ok', {}));
      expect(again.code, again.stderr).toBe(0);
      expectClean(again);
      const job = jobs().find((j) => j.id === id)!;
      expect(job.status).toBe('failed');
      expect(job.failure_reason).toMatch(/runner.*was gone/);
      expect(fx.workspaces().filter((w) => w.status === 'acquired')).toEqual([]);
    }, 120_000);

    it('workspaces full: git worktree add fails, the job is recorded failed "disk full: <path>"', () => {
      mountTmpfs(join(stateDir, 'workspaces'), '1m');
      const filler = join(stateDir, 'workspaces', 'filler');
      fill(filler);
      const r = fx.run(['job', 'do', '--title', 'no room for a workspace'], fx.scenario('ws', {}));
      expectClean(r);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain(`disk full: ${join(stateDir, 'workspaces')}`);
      expect(r.stderr).toContain('Free space on the filesystem holding');
      const [job] = jobs();
      expect(r.stderr).toContain(`Job ${job?.id} could not make its workspace: it is recorded failed`);
      expect(job?.status).toBe('failed');
      expect(job?.failure_reason).toMatch(/^disk full: \//);
      expect(fx.todos('open')).toHaveLength(1);

      rmSync(filler);
      const again = fx.run(['job', 'do', '--title', 'after space was freed'], fx.scenario('ok', {}));
      expect(again.code, again.stderr).toBe(0);
    }, 120_000);

    it('workspace filling during the job: the agent cannot write, the job is recorded failed "disk full: <path>"', () => {
      mountTmpfs(join(stateDir, 'workspaces'), '4m');
      const filler = join(stateDir, 'workspaces', 'filler');
      const s = fx.scenario('ws-fills', {
        implement: [
          {
            actions: [
              { type: 'shell', command: `cat /dev/zero > '${filler}' 2>/dev/null; true` },
              write('f.txt', 'x'.repeat(64 * 1024)),
            ],
          },
        ],
      });
      const r = fx.run(['job', 'do', '--title', 'fills its workspace'], s);
      expectClean(r);
      expect(r.code, r.stderr).toBe(1);
      const id = jobIdFrom(r.stderr);
      expect(r.stderr).toContain(`job ${id} failed: disk full: `);
      const job = jobs().find((j) => j.id === id)!;
      expect(job.status).toBe('failed');
      expect(job.failure_reason).toMatch(/^disk full: \//);
      expect(fx.workspaces().filter((w) => w.status === 'acquired')).toEqual([]);
      rmSync(filler);
      const again = fx.run(['job', 'do', '--title', 'after space was freed'], fx.scenario('ok', {}));
      expect(again.code, again.stderr).toBe(0);
    }, 120_000);
  },
);
