// `ii demo`: a throwaway repository with a small project and its tests, a few
// todos, and one `ii job do` per todo on the built-in scripted agent, each a
// real child process with its own scenario. On a terminal the dashboard opens
// on them; elsewhere each job's progress is printed as it happens. Everything
// lives in one temp dir (repo, state, config), removed at the end unless kept.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { gitSync } from '../vcs/git-run.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { BANNER_ENV } from '../live/banner.js';
import { iiBin } from '../package-root.js';
import { DEMO_FILES } from './project.js';
import { DEMO_TODOS, type DemoTodo } from './scenarios.js';

export interface DemoOptions {
  keep: boolean;
  /** Open the dashboard (a terminal on both ends) instead of printing progress. */
  dashboard: boolean;
  /** Multiplies the scripted agent's pauses; 0 runs as fast as it can. */
  pace: number;
  out?: NodeJS.WritableStream;
}

export interface DemoResult {
  dir: string;
  jobs: { todo: DemoTodo; todoId: string; jobId: string | null; status: string; exitCode: number | null }[];
  /** True when every job ended as its scenario says it should. */
  ok: boolean;
}

/** The dashboard's header says the demo's jobs run on a script, not an agent (fits at 80 columns). */
export const DEMO_BANNER = 'demo · built-in scripted agent (no real agent)';

/** The demo's environment: its own state dir and config home, never the user's. */
export function demoEnv(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'config'),
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

export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  const out = o.out ?? process.stdout;
  const dir = mkdtempSync(join(tmpdir(), 'ii-demo-'));
  const env = demoEnv(dir);
  const children: ChildProcess[] = [];
  const stopAll = () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  };
  // A closed terminal (SIGHUP) too: the demo's jobs end and its folder goes.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, stopAll);
  try {
    const repo = createDemoRepo(dir);
    out.write(`demo repository: ${repo}\n`);
    out.write('agent: the built-in scripted agent (a script, not an AI; no account needed)\n\n');

    const scenarios = join(dir, 'scenarios');
    mkdirSync(scenarios);
    const jobs = DEMO_TODOS.map((todo, i) => {
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
      const scenario = join(scenarios, `${i + 1}.json`);
      writeFileSync(scenario, JSON.stringify(todo.scenario(o.pace), null, 2));
      return {
        todo,
        todoId,
        scenario,
        jobId: null as string | null,
        status: 'running',
        exitCode: null as number | null,
      };
    });

    const runs = jobs.map((j, i) => {
      const child = spawn(process.execPath, [iiBin(), 'job', 'do', j.todoId, '--agent', 'scripted'], {
        cwd: repo,
        env: { ...env, II_SCRIPTED_SCENARIO: j.scenario, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      const tag = `[${i + 1}]`;
      // The job's progress goes to stderr; its id is on the first line.
      createInterface({ input: child.stderr! }).on('line', (line) => {
        const m = /^job ([0-9a-f]+) for todo/.exec(line);
        if (m) j.jobId = m[1]!;
        if (!o.dashboard) out.write(`${tag} ${line}\n`);
      });
      child.stdout!.resume();
      return new Promise<void>((res) =>
        child.on('close', (code) => {
          j.exitCode = code;
          res();
        }),
      );
    });

    if (o.dashboard) {
      const dash = spawn(process.execPath, [iiBin(), 'dashboard'], {
        cwd: repo,
        env: { ...env, [BANNER_ENV]: DEMO_BANNER },
        stdio: 'inherit',
      });
      await new Promise<void>((res) => dash.on('close', () => res()));
      // Quitting the dashboard early ends the demo: stop the jobs still running.
      stopAll();
    }
    await Promise.all(runs);

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
    out.write('\n');
    for (const [i, j] of jobs.entries())
      out.write(
        `${j.status === j.todo.expected ? '✓' : '✗'} [${i + 1}] ${j.todo.title}: ${j.status}` +
          ` (${j.todo.path}${j.status === j.todo.expected ? '' : `; expected ${j.todo.expected}`})` +
          (j.jobId && o.keep ? `  ii job show ${j.jobId}` : '') +
          '\n',
      );
    return { dir, jobs: jobs.map(({ scenario: _s, ...rest }) => rest), ok };
  } finally {
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(sig, stopAll);
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
