// Three machines on one backlog (issue 31): three clones of one bare
// repository (the shared remote), each with its own state and config dirs and
// its own host name (II_HOST), and one PostgreSQL database. Todos made on A,
// `ii run --jobs 2` on all three at once: every todo runs exactly once, each
// machine lists every job, a job carries the host of the machine that ran it,
// and another machine shows its diff (fetched from the remote: [remote] push
// is on by default with PostgreSQL) and its log (from the store). Then a
// runner SIGKILLed on B is seen stale from C once its heartbeat is old, and
// `ii job retry` on C runs its todo again; and `ii job abandon` on C stops a
// job B runs.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { II, ii, type RunResult } from '../helpers/cli.js';
import { write } from '../helpers/job.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { testEnv } from '../helpers/env.js';

const server = pgServer();

interface Machine {
  name: string;
  host: string;
  repo: string;
  env: NodeJS.ProcessEnv;
}

interface ListedJob {
  id: string;
  todo_id: string;
  status: string;
  host: string | null;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

const TOML =
  '[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\n';
const SAID = 'worked on it over here';

describe.skipIf(!server)(`three machines on one backlog${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  const tmp = tempDir('ii-pg-machines-');
  const db = usePgDatabase({ scope: 'file', prefix: 'ii_machines' });
  const machines: Machine[] = [];
  const spawned: ChildProcess[] = [];

  const query = db.query;

  const run = (m: Machine, args: string[]): RunResult => ii(args, { cwd: m.repo, env: m.env });

  function start(m: Machine, args: string[], env: NodeJS.ProcessEnv = {}) {
    const child = spawn(process.execPath, [II, ...args], {
      cwd: m.repo,
      env: { ...process.env, NO_COLOR: '1', ...m.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    spawned.push(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const exit = new Promise<RunResult>((res) =>
      child.on('close', (code) => res({ code: code ?? -1, stdout: out, stderr: err })),
    );
    return { child, exit, stderr: () => err };
  }

  const listed = (m: Machine): ListedJob[] => {
    const r = run(m, ['job', 'list', '--all', '--json']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as ListedJob[];
  };

  /** The machine whose state dir holds the job's files: the one that ran it. */
  const ranOn = (id: string): Machine[] =>
    machines.filter((m) => existsSync(join(m.env.XDG_STATE_HOME!, 'incrementum', 'jobs', id)));

  beforeAll(async () => {
    const seed = join(tmp.path, 'seed');
    mkdirSync(seed);
    gitRepo(seed, { 'README.md': '# r\n', 'incrementum.toml': TOML });
    const bare = join(tmp.path, 'shared.git');
    git(tmp.path, 'clone', '-q', '--bare', seed, bare);
    // A folder: each todo plays default.json from its own place (<todo>.state),
    // so jobs running at once never take each other's turns.
    const scenario = join(tmp.path, 'scenarios');
    mkdirSync(scenario);
    writeFileSync(
      join(scenario, 'default.json'),
      JSON.stringify({
        implement: [
          {
            actions: [
              { type: 'message', text: SAID },
              write('work.txt', 'done here\n'),
              { type: 'delay', ms: 300 },
            ],
          },
        ],
        'commit-message': [{ actions: [{ type: 'commit_message', text: 'Do the work' }] }],
      }),
    );
    for (const name of ['a', 'b', 'c']) {
      const home = join(tmp.path, `machine-${name}`);
      mkdirSync(home);
      const repo = join(home, 'repo');
      // --no-local: each machine has only what it fetched from the remote.
      git(home, 'clone', '-q', '--no-local', bare, repo);
      machines.push({
        name,
        host: `machine-${name}`,
        repo,
        env: testEnv(home, {
          II_HOST: `machine-${name}`,
          II_DATABASE_URL: db.url,
          II_SCRIPTED_SCENARIO: scenario,
        }),
      });
    }
  }, 60_000);

  afterAll(async () => {
    for (const c of spawned) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    tmp.cleanup();
  });

  const A = () => machines[0]!;
  const B = () => machines[1]!;
  const C = () => machines[2]!;

  it('todos made on A, ii run --jobs 2 on A, B and C at once: each todo runs once, everyone sees every job, diffs and logs cross machines', async () => {
    const todos = Array.from({ length: 8 }, (_, i) => {
      const r = run(A(), ['todo', 'create', '--title', `task ${i + 1}`]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trim();
    });
    // B and C see A's todos: the store knows the repository by its remote, not a path.
    for (const m of [B(), C()]) {
      const r = run(m, ['todo', 'list', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { id: string }[]).map((t) => t.id).sort()).toEqual([...todos].sort());
    }

    const runs = machines.map((m) => start(m, ['run', '--jobs', '2']));
    const results = await Promise.all(runs.map((r) => r.exit));
    for (const r of results) expect(r.code, r.stderr).toBe(0);

    // Exactly one job per todo, each completed.
    const byTodo = await query<{ todo_id: string; n: number; status: string }>(
      'SELECT todo_id, count(*)::int AS n, min(status) AS status FROM jobs GROUP BY todo_id',
    );
    expect(byTodo.map((r) => [r.todo_id, r.n, r.status]).sort()).toEqual(
      todos.map((t) => [t, 1, 'completed']).sort(),
    );
    const jobs = await query<{ id: string; todo_id: string; host: string }>(
      'SELECT id, todo_id, host FROM jobs',
    );

    // Every machine lists every job, each with the host of the machine that ran it
    // (the one whose state dir holds its files).
    for (const m of machines) {
      const seen = listed(m);
      expect(seen.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    }
    for (const j of jobs) {
      const ran = ranOn(j.id);
      expect(
        ran.map((m) => m.host),
        j.id,
      ).toEqual([j.host]);
      // And did the work (a commit), as C reads it from the store.
      const onC = JSON.parse(run(C(), ['job', 'show', j.id, '--json']).stdout) as {
        host: string;
        workspace_path: string | null;
        changes: { commits: unknown[] }[];
      };
      expect(onC.host).toBe(j.host);
      // In a workspace of its own machine (the store lists every machine's).
      expect(onC.workspace_path?.startsWith(ran[0]!.env.XDG_STATE_HOME!), onC.workspace_path ?? '').toBe(
        true,
      );
      expect(onC.changes.flatMap((c) => c.commits).length, j.id).toBeGreaterThan(0);
    }
    const hosts = new Set(jobs.map((j) => j.host));
    // Not a test of fairness, but three runners of two slots each took part.
    expect(hosts.size, [...hosts].join(', ')).toBeGreaterThan(1);

    // A job's diff on a machine that did not run it: fetched from the shared remote, then shown.
    const job = jobs[0]!;
    const other = machines.find((m) => m.host !== job.host)!;
    const runner = machines.find((m) => m.host === job.host)!;
    const shown = JSON.parse(run(runner, ['job', 'show', job.id, '--json']).stdout) as {
      changes: { commits: { commit_id: string }[] }[];
    };
    const last = shown.changes.flatMap((c) => c.commits).at(-1)?.commit_id;
    expect(last, JSON.stringify(shown)).toBeTruthy();
    expect(() => git(other.repo, 'cat-file', '-e', `${last}^{commit}`)).toThrow();
    const d = run(other, ['job', 'diff', job.id]);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stderr).toContain(`fetching job ${job.id}'s refs from the remote origin`);
    expect(d.stdout).toContain('+done here');
    git(other.repo, 'cat-file', '-e', `${last}^{commit}`);

    // Its log, from the store: this machine has no file of it.
    expect(existsSync(join(other.env.XDG_STATE_HOME!, 'incrementum', 'jobs', job.id))).toBe(false);
    const logs = run(other, ['job', 'logs', job.id]);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain(SAID);
    expect(logs.stdout).toBe(run(runner, ['job', 'logs', job.id]).stdout);
  }, 300_000);

  /** A todo made on A, run on B by an agent that holds its implement turn: once B's job is implementing. */
  async function heldOnB(title: string) {
    const held = join(tmp.path, 'held.json');
    writeFileSync(
      held,
      JSON.stringify({
        implement: [
          {
            actions: [
              { type: 'message', text: 'holding on' },
              { type: 'delay', ms: 600_000 },
            ],
          },
        ],
      }),
    );
    const made = run(A(), ['todo', 'create', '--title', title]);
    expect(made.code, made.stderr).toBe(0);
    const todo = made.stdout.trim();
    const onB = start(B(), ['job', 'do', todo, '--no-edit'], { II_SCRIPTED_SCENARIO: held });
    const [row] = await waitFor(
      async () => {
        const r = await query<{ id: string; host: string; pid: number }>(
          "SELECT id, host, pid FROM jobs WHERE todo_id = $1 AND status = 'active' AND stage = 'implementing'",
          [todo],
        );
        return r.length ? r : null;
      },
      "B's job to be implementing",
      60_000,
    );
    return { todo, onB, row: row! };
  }

  it('ii job abandon on C stops the job B runs (its runner polls the store for it)', async () => {
    const { todo, onB, row } = await heldOnB('abandoned from C');
    const asked = run(C(), ['job', 'abandon', row.id, '--reason', 'not needed after all', '--wait']);
    expect(asked.code, asked.stderr).toBe(0);
    const ended = await onB.exit;
    expect(ended.code, ended.stderr).not.toBe(0);
    const [job] = await query<{ status: string; failure_reason: string }>(
      'SELECT status, failure_reason FROM jobs WHERE id = $1',
      [row.id],
    );
    expect(job).toEqual({ status: 'abandoned', failure_reason: 'not needed after all' });
    expect(
      (await query<{ status: string }>('SELECT status FROM todos WHERE id = $1', [todo]))[0]?.status,
    ).toBe('open');
  }, 300_000);

  it('a runner SIGKILLed on B is seen stale from C once its heartbeat is old, and ii job retry on C runs its todo again', async () => {
    const { todo, onB, row } = await heldOnB('killed on B');
    expect(row.host).toBe(B().host);
    expect(row.pid).toBe(onB.child.pid);
    // The runner dies at once (a machine lost, an OOM kill): its heartbeat stops.
    onB.child.kill('SIGKILL');
    await onB.exit;

    // C cannot probe B's pid: it goes by the heartbeat, which is stale after
    // 30 s (STALE_AFTER_MS). Until then C says active, after that stale.
    const shownOnC = () => run(C(), ['job', 'show', row.id]);
    expect(shownOnC().stdout).not.toContain('stale');
    await waitFor(
      () => shownOnC().stdout.includes('(stale: its runner is gone)'),
      'C to see the job stale',
      90_000,
      1000,
    );
    const listedOnC = run(C(), ['job', 'list']);
    expect(listedOnC.stdout).toMatch(new RegExp(`${row.id}.*stale`));

    // Retry on C: the old job is failed (its runner was gone) and the todo runs again, on C.
    const retried = run(C(), ['job', 'retry', row.id]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stderr).toContain(`job ${row.id} failed (its runner was gone)`);
    const after = await query<{ id: string; status: string; host: string; retried_from: string | null }>(
      'SELECT id, status, host, retried_from FROM jobs WHERE todo_id = $1 ORDER BY started_at',
      [todo],
    );
    expect(after.map((j) => [j.id === row.id, j.status, j.host])).toEqual([
      [true, 'failed', B().host],
      [false, 'completed', C().host],
    ]);
    expect(after[1]!.retried_from).toBe(row.id);
  }, 300_000);
});
