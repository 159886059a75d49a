// `ii demo`: a throwaway repository with a small project and its tests, a few
// todos, run through the backlog runner (as `ii run --jobs 3` runs them) on
// the built-in scripted agent: each job a real `ii job do` child process
// playing its todo's scenario. On a terminal the dashboard opens
// on them; elsewhere each job's progress is printed as it happens. Everything
// lives in one temp dir (repo, state, config), removed at the end unless kept.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { gitSync } from '../../vcs/git-run.js';
import { endSessionOf } from '../job/deps.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { BANNER_ENV } from '../dashboard/banner.js';
import { iiBin } from '../../package-root.js';
import { DEMO_FILES } from './project.js';
import { DEMO_TODOS, type DemoTodo } from './scenarios.js';
import { hostName } from '../../proc/host.js';
import { BacklogRunner } from '../../backlog/scheduler.js';
import { openStateStore } from '../../state/index.js';
import { asyncStore } from '../../state/sync-adapter.js';
import { currentRepo } from '../context.js';

/** Jobs the demo runs at once: one of its four todos waits for a slot. */
const DEMO_SLOTS = 3;

export interface DemoOptions {
  keep: boolean;
  /** Open the dashboard (a terminal on both ends) instead of printing progress. */
  dashboard: boolean;
  /** Multiplies the scripted agent's pauses; 0 runs as fast as it can. */
  pace: number;
  out?: NodeJS.WritableStream;
  /** Aborting stops the demo as a quit does (the CLI aborts when nobody reads its output any more). */
  signal?: AbortSignal;
}

/** Why a demo ended before its jobs did: the person quit (q, Ctrl-C), a signal, or its output was closed. */
export type DemoStop = 'quit' | 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'output';

export interface DemoResult {
  dir: string;
  jobs: { todo: DemoTodo; todoId: string; jobId: string | null; status: string; exitCode: number | null }[];
  /** True when every job ended as its scenario says it should (or the demo was stopped). */
  ok: boolean;
  /** Set when the demo was stopped before its jobs ended: they were stopped too. */
  stopped: DemoStop | null;
}

/** The dashboard's header says the demo's jobs run on a script, not an agent (fits at 80 columns). */
export const DEMO_BANNER = 'demo · built-in scripted agent (no real agent)';

/** The demo's environment: its own state dir and config home, never the user's. */
export function demoEnv(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    // Its own SQLite state, even where a shared store is set: a demo's todos are nobody else's.
    II_DATABASE_URL: '',
    GIT_AUTHOR_NAME: 'incrementum demo',
    GIT_AUTHOR_EMAIL: 'demo@incrementum.invalid',
    GIT_COMMITTER_NAME: 'incrementum demo',
    GIT_COMMITTER_EMAIL: 'demo@incrementum.invalid',
    NO_UPDATE_NOTIFIER: '1',
  };
}

/** Creates the repository with the demo project, committed on main. */
export function createDemoRepo(dir: string): string {
  const repo = join(dir, 'textkit');
  for (const [path, text] of Object.entries(DEMO_FILES)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  const git = (...args: string[]) => {
    const r = gitSync(repo, args, { env: demoEnv(dir) });
    if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed in ${repo}: ${r.stderr.trim()}`);
  };
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'textkit 1.0: truncate()');
  return repo;
}

const ii = (args: string[], cwd: string, env: NodeJS.ProcessEnv): string =>
  execFileSync(process.execPath, [iiBin(), ...args], { cwd, env, encoding: 'utf8' }).trim();

const STOP_TEXT: Record<DemoStop, string> = {
  quit: 'you quit the dashboard',
  SIGINT: 'Ctrl-C',
  SIGTERM: 'SIGTERM',
  SIGHUP: 'the terminal closed',
  output: 'its output was closed',
};

export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  const out = o.out ?? process.stdout;
  const dir = mkdtempSync(join(tmpdir(), 'ii-demo-'));
  const env = demoEnv(dir);
  const children: ChildProcess[] = [];
  let stopped: DemoStop | null = null;
  let stopRunner = () => {};
  let runnerDone = false;
  // Ends the backlog runner (no new jobs), the job runners (each cancels its
  // job and releases its workspace) and the dashboard; the demo then waits
  // for them and removes its folder.
  const stopAll = () => {
    stopRunner();
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  };
  const stop = (why: DemoStop) => {
    stopped ??= why;
    stopAll();
  };
  // A closed terminal (SIGHUP) too: the demo's jobs end and its folder goes.
  const onSignal = (sig: NodeJS.Signals) => stop(sig as DemoStop);
  const onAbort = () => stop('output');
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, onSignal);
  o.signal?.addEventListener('abort', onAbort, { once: true });
  if (o.signal?.aborted) stopped = 'output';
  try {
    const repo = createDemoRepo(dir);
    out.write(`demo repository: ${repo}\n`);
    out.write('agent: the built-in scripted agent (a script, not an AI; no account needed)\n\n');

    // A scenario folder: the scripted agent plays <todo id>.json for each todo.
    const scenarios = join(dir, 'scenarios');
    mkdirSync(scenarios);
    const jobs = DEMO_TODOS.map((todo) => {
      const todoId = ii(
        [
          'todo',
          'create',
          '--title',
          todo.title,
          '--desc',
          todo.description,
          '--type',
          todo.type,
          '--priority',
          String(todo.priority),
        ],
        repo,
        env,
      );
      writeFileSync(join(scenarios, `${todoId}.json`), JSON.stringify(todo.scenario(o.pace), null, 2));
      return {
        todo,
        todoId,
        jobId: null as string | null,
        status: 'running',
        exitCode: null as number | null,
      };
    });

    // The todos go through the backlog runner, as `ii run --jobs 3` runs
    // them: in run order (priority first), three at once, the fourth when a
    // slot frees. Each job is its own `ii job do --backlog` process.
    const store = asyncStore(openStateStore({ dir: join(dir, 'state', 'incrementum') }));
    const slug = currentRepo(repo).slug;
    const closes: Promise<void>[] = [];
    const runner = new BacklogRunner({
      store,
      repo: { root: repo, slug },
      finishSession: endSessionOf(store),
      slots: DEMO_SLOTS,
      // Once each: the abandoned todo is not tried again.
      maxAttempts: 1,
      start: (t) => {
        const i = jobs.findIndex((j) => j.todoId === t.id);
        const j = jobs[i]!;
        // Each runner leads its own group: a signal meant for the demo's group
        // (Ctrl-C on the terminal) reaches the demo alone, which stops each runner once.
        const child = spawn(
          process.execPath,
          [iiBin(), 'job', 'do', t.id, '--backlog', '--no-edit', '--agent', 'scripted'],
          {
            cwd: repo,
            env: { ...env, II_SCRIPTED_SCENARIO: scenarios, NO_COLOR: '1' },
            stdio: ['ignore', 'pipe', 'pipe'],
            detached: true,
          },
        );
        children.push(child);
        const tag = `[${i + 1}]`;
        // The job's progress goes to stderr; its id is on the first line.
        createInterface({ input: child.stderr! }).on('line', (line) => {
          const m = /^job ([0-9a-f]+) for todo/.exec(line);
          if (m) j.jobId = m[1]!;
          if (!o.dashboard) out.write(`${tag} ${line}\n`);
        });
        child.stdout!.resume();
        closes.push(
          new Promise<void>((res) =>
            child.on('close', (code) => {
              j.exitCode = code;
              res();
            }),
          ),
        );
        return { pid: child.pid!, log: '', child };
      },
    });
    stopRunner = () => runner.stop();
    // Recorded as an `ii run` is, so the dashboard's header shows it.
    const me = await store.runners.register({
      repo: slug,
      pid: process.pid,
      host: hostName(),
      slots: DEMO_SLOTS,
      watch: false,
    });
    if (!o.dashboard)
      out.write(`running the ${jobs.length} todos through the backlog runner, ${DEMO_SLOTS} at once\n\n`);
    // Stopped while setting up (the todos are created synchronously): no job starts.
    if (stopped) runner.stop();
    const running = runner.run().finally(async () => {
      runnerDone = true;
      await store.runners.remove(me.id);
      await store.close();
    });

    if (o.dashboard) {
      const dash = spawn(process.execPath, [iiBin(), 'dashboard'], {
        cwd: repo,
        env: { ...env, [BANNER_ENV]: DEMO_BANNER },
        stdio: 'inherit',
      });
      children.push(dash);
      await new Promise<void>((res) => dash.on('close', () => res()));
      // Quitting the dashboard (q, Ctrl-C) before the jobs end ends the demo: stop them.
      if (!runnerDone || children.some((c) => c !== dash && c.exitCode === null && c.signalCode === null))
        stop('quit');
    }
    await running;
    await Promise.all(closes);
    if (stopped) {
      out.write(`
the demo was stopped (${STOP_TEXT[stopped]}); its jobs were stopped too.
`);
      return { dir, jobs, ok: true, stopped };
    }

    for (const j of jobs) {
      if (!j.jobId) continue;
      try {
        const job = JSON.parse(ii(['job', 'show', j.jobId, '--json'], repo, env)) as { status: string };
        j.status = job.status;
      } catch {
        j.status = 'unknown';
      }
    }
    const ok = jobs.every((j) => j.status === j.todo.expected);
    // ✓ means "took the path it shows", abandoned included: said, so a ✓ by
    // an abandoned job does not read as a success.
    out.write(
      ok
        ? '\neach job took the path it shows (✓), the abandoned one too:\n'
        : '\nnot every job took the path it shows (✗):\n',
    );
    for (const [i, j] of jobs.entries())
      out.write(
        `${j.status === j.todo.expected ? '✓' : '✗'} [${i + 1}] ${j.todo.title}: ${j.status}` +
          ` (${j.todo.path}${j.status === j.todo.expected ? '' : `; expected ${j.todo.expected}`})` +
          (j.jobId && o.keep ? `  ii job show ${j.jobId}` : '') +
          '\n',
      );
    return { dir, jobs, ok, stopped: null };
  } catch (err) {
    // A stop while setting up kills the `ii todo create` in hand (Ctrl-C
    // reaches the whole group): that is the stop, not an error of its own.
    const sig = (err as { signal?: string | null }).signal;
    stopped ??= sig === 'SIGINT' || sig === 'SIGTERM' || sig === 'SIGHUP' ? sig : null;
    if (!stopped) throw err;
    return { dir, jobs: [], ok: true, stopped };
  } finally {
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(sig, onSignal);
    o.signal?.removeEventListener('abort', onAbort);
    stopAll();
    if (o.keep) {
      out.write(
        `\nkept in ${dir}\n` +
          `look around:  cd ${join(dir, 'textkit')} && export XDG_STATE_HOME=${join(dir, 'state')}\n` +
          `              node ${iiBin()} dashboard    (or job list --all, job show <id>, job diff <id>)\n` +
          `remove it:    rm -rf ${dir}  (its worktrees live inside it)\n`,
      );
    } else {
      rmSync(dir, { recursive: true, force: true });
      out.write('\nthe demo left nothing behind (use --keep to keep its repository and state).\n');
    }
  }
}
