// ii demo runs its todos through the backlog runner, as `ii run --jobs 3`
// would: read back from the kept demo's own job records, never more than
// three jobs at once, the lowest-priority todo started only once a slot
// freed, each todo run exactly once.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { II, ii } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir> | null = null;
afterEach(() => tmp?.cleanup());

interface JobRec {
  todo_id: string;
  status: string;
  started_at: string;
  completed_at: string | null;
}

it('ii demo: its jobs go through the backlog runner, three at a time, in run order', () => {
  tmp = tempDir('ii-demo-runner-');
  const r = spawnSync(process.execPath, [II, 'demo', '--no-dashboard', '--keep'], {
    env: { ...process.env, TMPDIR: tmp.path, NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 240_000,
  });
  expect(r.status, r.stdout + r.stderr).toBe(0);
  expect(r.stdout).toContain('running the 4 todos through the backlog runner, 3 at once');
  const [dir] = readdirSync(tmp.path).filter((n) => n.startsWith('ii-demo-'));
  const demo = join(tmp.path, dir!);
  const env = { XDG_STATE_HOME: join(demo, 'state'), XDG_CONFIG_HOME: join(demo, 'config') };
  const cwd = join(demo, 'textkit');
  const jobs = JSON.parse(ii(['job', 'list', '--all', '--json'], { cwd, env }).stdout) as JobRec[];
  const todos = JSON.parse(ii(['todo', 'list', '--json'], { cwd, env }).stdout) as {
    id: string;
    priority: number;
  }[];
  expect(jobs).toHaveLength(4);
  expect(new Set(jobs.map((j) => j.todo_id)).size).toBe(4);
  const atOnce = (at: string) =>
    jobs.filter((k) => k.started_at <= at && (k.completed_at === null || k.completed_at > at)).length;
  expect(Math.max(...jobs.map((j) => atOnce(j.started_at)))).toBe(3);
  // The P4 todo waited for a slot: it started after another job ended.
  const last = todos.find((t) => t.priority === 4)!;
  const lastJob = jobs.find((j) => j.todo_id === last.id)!;
  expect(jobs.some((j) => j.completed_at !== null && j.completed_at <= lastJob.started_at)).toBe(true);
  // Each todo was tried once: the abandoned one is not ready again (the
  // board's Backlog column and header say what `ii todo list --ready` does).
  expect(JSON.parse(ii(['todo', 'list', '--ready', '--json'], { cwd, env }).stdout)).toEqual([]);
}, 300_000);
