// ii run's jobs run at a lower CPU priority than the person's own work
// ([run] nice, --nice): each runner it starts, and what that runner starts
// (the agent, the agent's commands, the tests), at nice +N, while ii run
// itself stays at the caller's. The values are read where they run: the
// agent's and its command's from /proc/<pid>/stat by a command the scripted
// agent runs, the tests' by the test command itself, the runner's (and ii
// run's) from the hand-over trace (II_TRACE), which each mark writes with it.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { II, type RunResult } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';
import { DEFAULT_RUN_NICE } from '../../src/model/nice.js';
import { STEP_ASIDE_NICE } from '../../src/proc/priority.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
/** Where the processes of the job write their /proc/<pid>/stat lines. */
let seen: string;

const own = getPriority();
/** Where Linux schedules each session as one (autogroup), a session's nice value: this process's now. */
const hasAutogroups = existsSync('/proc/self/autogroup');
/** Linux takes a person's session changes one a tenth of a second, machine-wide: a runner's own may wait its turn. */
const asRoot = process.getuid?.() === 0;
const ownSession = () => (hasAutogroups ? readFileSync('/proc/self/autogroup', 'utf8') : '');

/**
 * A test command's session is lowered by its runner just after it starts,
 * and may be read before: up to 5 s for it (what nice = 0 waits in full).
 */
const settled = `for i in $(seq 50); do grep -q 'nice 0$' /proc/self/autogroup 2>/dev/null || break; sleep 0.1; done`;

/** A shell command appending process `pid`'s autogroup line ("/autogroup-7 nice 10") to `seen/<who>-session`, if it has one. */
const autogroup = (pid: string, who: string) =>
  `cat /proc/${pid}/autogroup >> ${join(seen, `${who}-session`)} 2>/dev/null || true`;
const at = (by: number) => Math.min(19, own + by);

function setup(run = '') {
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  seen = join(tmp.path, 'seen');
  mkdirSync(seen, { recursive: true });
  gitRepo(repo, {
    'README.md': '# r\n',
    'incrementum.toml':
      '[agent]\npreset = "scripted"\n\n[sandbox]\nmode = "off"\n\n' +
      `[job]\ntest-commands = ["cat /proc/self/stat >> ${join(seen, 'tests')}; ${settled}; ${autogroup('self', 'tests')}"]\nauto-commit = false\n` +
      (run ? `\n[run]\n${run}\n` : ''),
  });
  // A folder: each todo plays default.json from its start.
  const scenario = join(tmp.path, 'scenarios');
  mkdirSync(scenario, { recursive: true });
  const turn = {
    actions: [
      { type: 'write', path: 'x.txt', content: 'x\n' },
      // sh's parent is the agent, whose parent is the runner; cat is a command the agent started.
      {
        type: 'shell',
        command:
          `cat /proc/$PPID/stat >> ${join(seen, 'agent')}; cat /proc/self/stat >> ${join(seen, 'command')}; ` +
          `${autogroup('$PPID', 'agent')}; runner=$(sed 's/.*) //' /proc/$PPID/stat | cut -d' ' -f2); ` +
          autogroup('$runner', 'runner'),
      },
    ],
  };
  writeFileSync(join(scenario, 'default.json'), JSON.stringify({ implement: [turn] }));
  env = { ...env, II_SCRIPTED_SCENARIO: scenario };
}

let callerSession = '';
beforeEach(() => {
  callerSession = ownSession();
  tmp = tempDir('ii-run-nice-');
  env = {
    XDG_STATE_HOME: join(tmp.path, 'state'),
    XDG_CONFIG_HOME: join(tmp.path, 'config'),
    HOME: tmp.path,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@example.com',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@example.com',
    II_TRACE: join(tmp.path, 'trace.jsonl'),
  };
});
afterEach(() => tmp.cleanup());

/** ii with no time limit (a loaded machine runs a job slowly); resolves when it exits. */
function iiAsync(args: string[]): Promise<RunResult> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [II, ...args], {
      cwd: repo,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** The nice value in each /proc/<pid>/stat line `who` wrote (field 19; the name in parentheses may hold spaces). */
function nices(who: string): number[] {
  const file = join(seen, who);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => Number(l.slice(l.lastIndexOf(')') + 2).split(' ')[16]));
}

/** The nice value of each autogroup line `who` wrote. */
function sessionNices(who: string): number[] {
  const file = join(seen, `${who}-session`);
  if (!existsSync(file)) return [];
  return [...readFileSync(file, 'utf8').matchAll(/nice (-?\d+)/g)].map((m) => Number(m[1]));
}

/** The nice value, and the session's, at each mark's first occurrence in the trace. */
function niceAt(): Map<string, { nice: number; session_nice: number | null }> {
  const out = new Map<string, { nice: number; session_nice: number | null }>();
  for (const l of readFileSync(env.II_TRACE!, 'utf8').split('\n').filter(Boolean)) {
    const m = JSON.parse(l) as { mark: string; nice: number; session_nice: number | null };
    if (!out.has(m.mark)) out.set(m.mark, m);
  }
  return out;
}

/** Runs one todo through `ii run [args]`; the nice values its processes had. */
async function runOne(args: string[] = []) {
  const todo = await iiAsync(['todo', 'create', '--title', 'anything']);
  expect(todo.code, todo.stderr).toBe(0);
  const r = await iiAsync(['run', '--jobs', '1', ...args]);
  expect(r.code, r.stderr).toBe(0);
  const marks = niceAt();
  return {
    stdout: r.stdout + r.stderr,
    run: marks.get('handover')?.nice,
    runner: marks.get('prompt')?.nice,
    /** A start at the floor (proc/priority.ts bootLow): the runner's session as it began, if it was one. */
    bootSession: marks.get('boot_low')?.session_nice,
    wrapUp: marks.get('journal_done')?.nice,
    wrapUpSession: marks.get('journal_done')?.session_nice,
    agent: nices('agent'),
    command: nices('command'),
    tests: nices('tests'),
    /** Their sessions' (each is a session of its own): [] without autogroups. */
    sessions: {
      runner: sessionNices('runner'),
      agent: sessionNices('agent'),
      tests: [...new Set(sessionNices('tests'))],
    },
  };
}

describe('ii run', () => {
  it(`starts its jobs at nice +${DEFAULT_RUN_NICE} by default: the runner, its agent, the agent's commands and the tests; ii run itself stays at the caller's`, async () => {
    setup();
    const n = await runOne();
    expect(n.run).toBe(own);
    expect(n.runner).toBe(at(DEFAULT_RUN_NICE));
    expect(n.agent).toEqual([at(DEFAULT_RUN_NICE)]);
    expect(n.command).toEqual([at(DEFAULT_RUN_NICE)]);
    // The baseline run and the iteration's.
    expect(n.tests.length).toBeGreaterThanOrEqual(2);
    expect(new Set(n.tests)).toEqual(new Set([at(DEFAULT_RUN_NICE)]));
    // Its wrap-up steps aside further, capped at 19.
    expect(n.wrapUp).toBe(at(DEFAULT_RUN_NICE + STEP_ASIDE_NICE));
    // One job started alone: its start is not at the floor (only starts together are).
    expect(n.bootSession).toBeUndefined();
    // Where sessions are scheduled as one, each of theirs is lowered too, and the caller's is not.
    if (hasAutogroups) {
      const lowered = [at(DEFAULT_RUN_NICE)];
      expect(n.sessions).toEqual({ runner: lowered, agent: lowered, tests: lowered });
      expect(n.wrapUpSession).toBe(at(DEFAULT_RUN_NICE + STEP_ASIDE_NICE));
      expect(ownSession()).toBe(callerSession);
    }
  });

  it('jobs started together start at the floor, their sessions raised to the jobs’ level by their first prompts', async () => {
    setup();
    for (const title of ['one', 'two']) {
      const t = await iiAsync(['todo', 'create', '--title', title]);
      expect(t.code, t.stderr).toBe(0);
    }
    const r = await iiAsync(['run', '--jobs', '2']);
    expect(r.code, r.stderr).toBe(0);
    const boots = readFileSync(env.II_TRACE!, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { mark: string; pid: number; nice: number; session_nice: number | null })
      .filter((m) => m.mark === 'boot_low');
    expect(new Set(boots.map((m) => m.pid)).size).toBe(2);
    for (const m of boots) expect(m.nice).toBe(at(DEFAULT_RUN_NICE));
    if (hasAutogroups) {
      if (asRoot) for (const m of boots) expect(m.session_nice).toBe(19);
      // Read during their turns, after their first prompts: both agents' sessions at the jobs' level.
      expect(sessionNices('agent')).toEqual([at(DEFAULT_RUN_NICE), at(DEFAULT_RUN_NICE)]);
      expect(sessionNices('runner')).toEqual([at(DEFAULT_RUN_NICE), at(DEFAULT_RUN_NICE)]);
    }
  });

  it('[run] nice = 0 runs them at the caller’s priority; --nice wins over it', async () => {
    setup('nice = 0');
    const off = await runOne();
    expect(off.run).toBe(own);
    expect(off.runner).toBe(own);
    expect(off.agent).toEqual([own]);
    expect(off.command).toEqual([own]);
    expect(new Set(off.tests)).toEqual(new Set([own]));
    expect(off.wrapUp).toBe(at(STEP_ASIDE_NICE));
    if (hasAutogroups) {
      expect(off.sessions).toEqual({ runner: [0], agent: [0], tests: [0] });
      expect(off.wrapUpSession).toBe(at(STEP_ASIDE_NICE));
    }

    for (const p of [seen, env.II_TRACE!]) rmSync(p, { recursive: true });
    mkdirSync(seen);
    const three = await runOne(['--nice', '3']);
    expect(three.run).toBe(own);
    expect(three.runner).toBe(at(3));
    expect(three.agent).toEqual([at(3)]);
    expect(new Set(three.tests)).toEqual(new Set([at(3)]));
    if (hasAutogroups) expect(three.sessions).toEqual({ runner: [at(3)], agent: [at(3)], tests: [at(3)] });
  });

  it(`--land: the landing's setup and tests on the rebased tip run at the jobs' nice +${DEFAULT_RUN_NICE}, their sessions too, though ii run lands them itself`, async () => {
    setup();
    const n = await runOne(['--land']);
    expect(n.stdout).toMatch(/job \w+ landed on main/);
    expect(n.run).toBe(own);
    // The baseline run, the iteration's and the landing's on the tip.
    expect(n.tests.length).toBeGreaterThanOrEqual(3);
    expect(new Set(n.tests)).toEqual(new Set([at(DEFAULT_RUN_NICE)]));
    if (hasAutogroups) {
      expect(n.sessions.tests).toEqual([at(DEFAULT_RUN_NICE)]);
      expect(ownSession()).toBe(callerSession);
    }
  });

  it('refuses a [run] nice or --nice outside 0–19, saying what it may be, and starts nothing', async () => {
    for (const bad of ['20', '-1', '2.5', '"low"']) {
      setup(`nice = ${bad}`);
      await iiAsync(['todo', 'create', '--title', 'anything']);
      const r = await iiAsync(['run']);
      expect(r.code, bad).not.toBe(0);
      expect(r.stderr).toContain('invalid config');
      expect(r.stderr).toContain('run.nice: must be a whole number from 0 (jobs at your own priority) to 19');
      expect(existsSync(join(tmp.path, 'state', 'incrementum', 'runs'))).toBe(false);
      rmSync(repo, { recursive: true });
    }
    setup();
    for (const bad of ['20', '-1', 'low']) {
      const r = await iiAsync(['run', '--nice', bad]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('--nice must be a whole number from 0 (jobs at your own priority) to 19');
    }
  });
});
