// The built CLI on PostgreSQL: with II_DATABASE_URL set (a fresh database of
// the run's private server), every command reads and writes the shared store,
// and no SQLite file is made. One repository goes through a job's whole life
// (todo, job, listing, landing) and a backlog run of two slots.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { JobFixture, jobIdFrom, write, type RunningJob } from '../helpers/job.js';
import { waitFor } from '../helpers/tmp.js';

const server = pgServer();

let f: JobFixture;
const db = usePgDatabase({ prefix: 'ii_cli' });
const query = db.query;

/** Every file under the state dir whose name says SQLite (state.db and its -wal, -shm). */
function sqliteFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).filter((n) => /state\.db/.test(n));
}

/**
 * Each step of a test bounded within its own timeout, and one that runs out
 * says what the runner printed, what the database holds and what its
 * sessions wait on: a hang is otherwise only "test timed out".
 */
function bounded(job: RunningJob) {
  const told = async (what: string) => {
    const state = await query<Record<string, unknown>>(
      'SELECT id, status, stage, failure_reason FROM jobs',
    ).catch((e: unknown) => String(e));
    const sessions = await query<Record<string, unknown>>(
      `SELECT pid, application_name, state, wait_event_type, wait_event, left(query, 120) AS query
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    ).catch((e: unknown) => String(e));
    return new Error(
      `${what}\njobs: ${JSON.stringify(state)}\nsessions: ${JSON.stringify(sessions)}\nrunner's stderr:\n${job.stderr()}`,
    );
  };
  const within = async <T>(p: Promise<T>, ms: number, what: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const out = new Promise<never>((_, reject) => {
      timer = setTimeout(() => void told(`timed out waiting for ${what}`).then(reject), ms);
    });
    try {
      return await Promise.race([p, out]);
    } finally {
      clearTimeout(timer);
    }
  };
  return { within };
}

/** A job whose implement pass takes `ms` (a file written, then a wait), once it is active in the database. */
async function slowJobActive(
  ms: number,
): Promise<{ job: RunningJob; within: ReturnType<typeof bounded>['within'] }> {
  f.setup();
  const s = f.scenario('slow', {
    implement: [{ actions: [write('a.txt', 'a\n'), { type: 'delay', ms }] }],
    'commit-message': [{ actions: [{ type: 'commit_message', text: 'Add a' }] }],
  });
  const job = f.spawn(['job', 'do', '--title', 'slow work', '--no-edit'], s);
  const { within } = bounded(job);
  await within(
    waitFor(
      async () => ((await query("SELECT id FROM jobs WHERE status = 'active'")).length ? true : null),
      'the job to be active in PostgreSQL',
      60_000,
    ),
    20_000,
    'the job to be active in PostgreSQL',
  );
  return { job, within };
}

/** The job ended, completed (its runner exiting 0) or failed saying why, and its todo is not left held. */
async function expectEnded(job: RunningJob, code: number | null): Promise<void> {
  const [row] = await query<{ status: string; failure_reason: string | null }>(
    'SELECT status, failure_reason FROM jobs',
  );
  expect(row?.status, job.stderr()).not.toBe('active');
  if (row?.status === 'completed') expect(code, job.stderr()).toBe(0);
  else expect(row?.failure_reason, job.stderr()).toBeTruthy();
  const [todo] = await query<{ status: string }>('SELECT status FROM todos');
  expect(todo?.status).not.toBe('in_progress');
}

beforeEach(async () => {
  if (!server) return;
  f = new JobFixture('ii-pg-cli-');
  f.env.II_DATABASE_URL = db.url;
});
afterEach(async () => {
  if (!server) return;
  f.cleanup();
});

describe.skipIf(!server)(`the CLI on PostgreSQL${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  it('todo, job do, list, show, land and ii run --jobs 2 all go to the database; no SQLite file is made', async () => {
    f.setup();
    const stateDir = join(f.tmp.path, 'state', 'incrementum');

    // A todo, then a job on it run to the end by the scripted agent.
    const created = f.run(['todo', 'create', '--title', 'add hello']);
    expect(created.code, created.stderr).toBe(0);
    const todoId = created.stdout.trim();
    const s = f.scenario('job', {
      implement: [{ actions: [write('hello.txt', 'hi\n')] }],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Add hello' }] }],
    });
    const done = f.run(['job', 'do', todoId], s);
    expect(done.code, done.stderr).toBe(0);
    const jobId = jobIdFrom(done.stderr);
    expect(jobId).not.toBe('');

    // What the commands read back is the database's.
    const listed = JSON.parse(f.run(['job', 'list', '--all', '--json']).stdout) as {
      id: string;
      status: string;
    }[];
    expect(listed.map((j) => [j.id, j.status])).toEqual([[jobId, 'completed']]);
    const shown = f.show(jobId);
    expect(shown.status).toBe('completed');
    expect(shown.changes.flatMap((c) => c.commits).length).toBeGreaterThan(0);
    const rows = await query<{ id: string; status: string; todo_id: string }>(
      'SELECT id, status, todo_id FROM jobs',
    );
    expect(rows).toEqual([{ id: jobId, status: 'completed', todo_id: todoId }]);
    expect(await query<{ status: string }>('SELECT status FROM todos WHERE id = $1', [todoId])).toEqual([
      { status: 'done' },
    ]);

    // Landed onto main, and recorded so in the database.
    const landed = f.run(['job', 'land', jobId]);
    expect(landed.code, landed.stderr).toBe(0);
    expect(f.git('rev-parse', 'main').trim()).toBe(landed.stdout.trim());
    expect(f.git('show', 'main:hello.txt')).toBe('hi\n');
    const [landedRow] = await query<{ landed: unknown }>('SELECT landed FROM jobs WHERE id = $1', [jobId]);
    expect(landedRow?.landed).toBeTruthy();

    // A small backlog through ii run, two at once: each todo runs once.
    const todos = ['one', 'two', 'three'].map((t) => {
      const r = f.run(['todo', 'create', '--title', t]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trim();
    });
    const backlog = f.scenario('backlog', { implement: [{ actions: [] }] });
    const run = await f.runAsync(['run', '--jobs', '2'], backlog);
    expect(run.code, run.stderr).toBe(0);
    const byTodo = await query<{ todo_id: string; n: string; status: string }>(
      'SELECT todo_id, count(*) AS n, min(status) AS status FROM jobs WHERE todo_id = ANY($1) GROUP BY todo_id',
      [todos],
    );
    expect(byTodo.map((r) => [r.todo_id, Number(r.n), r.status]).sort()).toEqual(
      todos.map((t) => [t, 1, 'completed']).sort(),
    );
    // ii run recorded itself while it ran, and took its record with it.
    expect(await query('SELECT id FROM runners')).toEqual([]);
    const cli = JSON.parse(f.run(['job', 'list', '--all', '--json']).stdout) as unknown[];
    expect(cli).toHaveLength(4);

    // The store of record was PostgreSQL throughout: no SQLite file anywhere in the state dir.
    expect(sqliteFiles(stateDir)).toEqual([]);
    // The local state dir still holds what stays local (the job's event log).
    expect(existsSync(join(stateDir, 'jobs', jobId))).toBe(true);
  });

  it('a runner whose database sessions the server ends mid-job finishes the job (or fails it saying why), never leaves it active', async () => {
    const { job, within } = await slowJobActive(2500);
    // Once the job is active: every session of the runner ends (as a restart or an administrator would), twice.
    expect(db.terminate()).toBeGreaterThan(0);
    await within(
      waitFor(
        async () =>
          (await query("SELECT stage FROM jobs WHERE status = 'active' AND stage <> 'implementing'"))
            .length || (await query("SELECT id FROM jobs WHERE status <> 'active'")).length
            ? true
            : null,
        'the job to go past implementing',
        60_000,
      ),
      15_000,
      'the job to go past implementing',
    );
    db.terminate();
    const code = await within(job.exit, 15_000, 'the runner to exit');
    await expectEnded(job, code);
  });

  it("a runner whose database sessions the server keeps ending, from its job's start to its end, ends the job (completed, or failed saying why) and exits", async () => {
    const { job, within } = await slowJobActive(1500);
    let exited = false;
    const exit = job.exit.finally(() => (exited = true));
    // Every session of the runner ended every 0.1 to 0.5 s, whatever it is
    // doing: one ended between two queries of a connection it had checked
    // out (its log shipper opening its store) ended the runner with an
    // unhandled error, the job left active.
    let ended = 0;
    const until = Date.now() + 40_000;
    while (!exited && Date.now() < until) {
      await Promise.race([exit, new Promise((r) => setTimeout(r, 100 + Math.random() * 400))]);
      if (!exited) ended += db.terminate();
    }
    const code = await within(exit, 20_000, 'the runner to exit');
    expect(ended).toBeGreaterThan(0);
    expect(job.stderr()).not.toMatch(/Unhandled|node:events/);
    await expectEnded(job, code);
  }, 120_000);
});
