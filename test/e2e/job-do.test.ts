// `ii job do` end to end: the built CLI, a real git repo, the real scripted
// ACP agent as a child process, real test commands. Each test follows one path
// of the loop and checks what was recorded, not only the exit code.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { II, ii } from '../helpers/cli.js';
import { jobIdFrom, verdict, write, type JobJson } from '../helpers/job.js';
import { runningIn, runningWith } from '../helpers/procs.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { testEnv } from '../helpers/env.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;

const CONFIG = (tests: string[], extra = '') =>
  `[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ${JSON.stringify(tests)}\nauto-commit = false\n${extra}`;

function setup(tests = ['test -f README.md'], extra = '') {
  repo = join(tmp.path, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  gitRepo(repo, { 'README.md': '# r\n', 'incrementum.toml': CONFIG(tests, extra) });
}

function scenario(name: string, s: unknown): string {
  const p = join(tmp.path, `${name}.json`);
  writeFileSync(p, JSON.stringify(s));
  return p;
}

const run = (args: string[], scenarioPath?: string) =>
  ii(args, { cwd: repo, env: { ...env, ...(scenarioPath ? { II_SCRIPTED_SCENARIO: scenarioPath } : {}) } });

/** The runner's long-lived git processes for this test's workspaces (they name the worktree's git dir). */
const longLivedGits = () => runningWith(`--git-dir=${realpathSync(repo)}/.git/worktrees/`);

const show = (id: string): JobJson => JSON.parse(run(['job', 'show', id, '--json']).stdout) as JobJson;

beforeEach(() => {
  tmp = tempDir('ii-jobdo-');
  env = testEnv(tmp.path);
});
afterEach(() => tmp.cleanup());

describe('ii job do', () => {
  it('accepted the first time: one change, one iteration, committed, project review accepts, todo done', async () => {
    setup();
    const s = scenario('accept', {
      implement: [{ actions: [write('hello.txt', 'hi\n')] }],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Add hello.txt' }] }],
    });
    const r = run(['job', 'do', '--title', 'say hello'], s);
    expect(r.stderr).toContain('completed');
    // The runner's long-lived git processes ended with it.
    await waitFor(() => longLivedGits().length === 0, 'no git process of the job left');
    expect(r.code).toBe(0);
    // In the foreground, a completed job says how to land it.
    expect(r.stderr).toContain(`ii job land ${jobIdFrom(r.stderr)}`);
    const job = show(jobIdFrom(r.stderr));
    expect(job.status).toBe('completed');
    // One change made; the last pass's (nothing more to change) has no commit.
    expect(job.changes.map((x) => x.commits.length)).toEqual([1, 0]);
    const c = job.changes[0]!.commits;
    expect(c).toHaveLength(1);
    expect(c[0]!.tests_passed).toBe(true);
    expect(c[0]!.review?.outcome).toBe('ACCEPT');
    expect(c[0]!.files.map((f) => f.path)).toEqual(['hello.txt']);
    expect(job.project_review?.outcome).toBe('ACCEPT');
    // The final commit carries the commit template's message and the change id.
    const finalSha = r.stdout.trim();
    const msg = execFileSync('git', ['log', '-1', '--format=%B', finalSha], { cwd: repo, encoding: 'utf8' });
    expect(msg).toContain('Add hello.txt');
    expect(msg).toMatch(/Todo: [0-9a-f]+/);
    expect(msg).toContain(`Change-Id: ${job.changes[0]!.change_id}`);
    // Protocol files never committed; the user's checkout untouched.
    const tree = execFileSync('git', ['ls-tree', '-r', '--name-only', finalSha], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(tree).not.toContain('.incrementum-');
    expect(existsSync(join(repo, 'hello.txt'))).toBe(false);
    const todos = JSON.parse(run(['todo', 'list', '--json', '--status', 'done']).stdout) as unknown[];
    expect(todos).toHaveLength(1);
    // Every agent session has a transcript, and the journal was written.
    expect(job.agent_sessions.map((a) => a.purpose)).toEqual([
      'implement',
      'review',
      'commit-message',
      'implement',
      'project-review',
    ]);
    for (const a of job.agent_sessions)
      expect(readFileSync(a.transcript, 'utf8')).toContain('session/prompt');
    expect(existsSync(join(tmp.path, 'state', 'incrementum', 'jobs', job.id, 'journal.md'))).toBe(true);
  });

  it('changes requested: the feedback drives a second iteration, both kept and diffable', () => {
    setup();
    const s = scenario('changes', {
      implement: [{ actions: [write('a.txt', 'one\n')] }, { actions: [write('a.txt', 'one\ntwo\n')] }],
      review: [
        verdict('REQUEST_CHANGES', 'Needs a second line.\n\nAdd "two" to a.txt.'),
        verdict('ACCEPT', 'ok'),
      ],
    });
    const r = run(['job', 'do', '--title', 'two lines'], s);
    expect(r.code).toBe(0);
    const job = show(jobIdFrom(r.stderr));
    const commits = job.changes[0]!.commits;
    expect(commits).toHaveLength(2);
    expect(commits[0]!.review?.outcome).toBe('REQUEST_CHANGES');
    expect(commits[1]!.feedback).toContain('Add "two" to a.txt.');
    // The first iteration survives gc and diffs against the second.
    execFileSync('git', ['gc', '--prune=now', '-q'], { cwd: repo });
    const d = run(['job', 'diff', job.id, '--iteration', '2']);
    expect(d.code).toBe(0);
    expect(d.stdout).toContain('+two');
    expect(d.stdout).toContain('REQUEST_CHANGES');
  });

  it('tests failing then fixed: the failure table is the next feedback', () => {
    setup(['grep -q fixed a.txt'], 'baseline-tests = false\n');
    const s = scenario('tests', {
      implement: [{ actions: [write('a.txt', 'broken\n')] }, { actions: [write('a.txt', 'fixed\n')] }],
    });
    const r = run(['job', 'do', '--title', 'fix it'], s);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('tests failed');
    const commits = show(jobIdFrom(r.stderr)).changes[0]!.commits;
    expect(commits.map((c) => c.tests_passed)).toEqual([false, true]);
    expect(commits[1]!.feedback).toMatch(/\| *`?grep -q fixed a\.txt`? *\| *1 *\|/);
  });

  it('abandoned by the reviewer: exit 1, reason on stderr, todo reopened', () => {
    setup();
    const s = scenario('abandon', {
      implement: [{ actions: [write('x.txt', 'x\n')] }],
      review: [verdict('ABANDON', 'Out of scope.')],
    });
    const r = run(['job', 'do', '--title', 'nope'], s);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('abandoned');
    expect(show(jobIdFrom(r.stderr)).status).toBe('abandoned');
    const open = JSON.parse(run(['todo', 'list', '--json', '--status', 'open']).stdout) as unknown[];
    expect(open).toHaveLength(1);
  });

  it('invalid feedback fails the job with a clear reason', () => {
    setup();
    const s = scenario('invalid', {
      implement: [{ actions: [write('x.txt', 'x\n')] }],
      review: [
        { actions: [{ type: 'shell', command: 'printf "MAYBE\\n\\nhmm\\n" > .incrementum-feedback' }] },
      ],
    });
    const r = run(['job', 'do', '--title', 'x'], s);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/invalid feedback/);
  });

  it('a workspace removed under the job: the reason says so, not "spawn git ENOENT"', () => {
    // Unsandboxed: inside the sandbox the workspace is a mount point, which
    // the agent can empty but not remove; this is about something outside the job.
    setup(undefined, '\n[sandbox]\nmode = "off"\n');
    // The agent's turn removes the workspace, as something else removing it
    // while the job runs would; the runner's next git finds no directory.
    const s = scenario('gone', {
      implement: [{ actions: [{ type: 'shell', command: 'rm -rf "$PWD"' }] }],
    });
    const r = run(['job', 'do', '--title', 'x'], s);
    expect(r.code).toBe(1);
    const job = show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(
      /^the workspace \/\S+ was removed while the job was using it \(git [a-z-]+ could not start there\)$/,
    );
    expect(job.failure_reason).toContain(job.workspace_path!);
    expect(r.stderr).not.toContain('spawn git ENOENT');
  });

  it('the iteration cap ends a job that never passes its tests', () => {
    setup(['false'], 'max-iterations = 2\nbaseline-tests = false\n');
    const s = scenario('cap', {
      implement: [
        { actions: [write('a.txt', '1\n')] },
        { actions: [write('a.txt', '2\n')] },
        { actions: [write('a.txt', '3\n')] },
      ],
    });
    const r = run(['job', 'do', '--title', 'never'], s);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/iteration/);
    expect(show(jobIdFrom(r.stderr)).status).toBe('failed');
  });

  it('no test commands is a usage error before anything starts', () => {
    setup();
    writeFileSync(join(repo, 'incrementum.toml'), '[agent]\npreset = "scripted"\n');
    const r = run(['job', 'do', '--title', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/test-commands/);
    expect(JSON.parse(run(['job', 'list', '--json', '--all']).stdout)).toEqual([]);
  });

  describe('a start that fails on what can be checked first leaves no todo behind', () => {
    const todos = () => JSON.parse(run(['todo', 'list', '--json']).stdout) as unknown[];
    const failsCleanly = (args: string[], message: RegExp) => {
      const r = run(['job', 'do', '--title', 'never created', ...args]);
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(2);
      expect(todos()).toEqual([]);
      expect(JSON.parse(run(['job', 'list', '--json', '--all']).stdout)).toEqual([]);
    };

    it('an unknown preset', () => {
      setup(['true']);
      writeFileSync(join(repo, 'incrementum.toml'), CONFIG(['true']).replace('"scripted"', '"nosuch"'));
      failsCleanly([], /unknown agent preset "nosuch"/);
      failsCleanly(['--agent', 'nosuch-either'], /unknown agent "nosuch-either"/);
    });

    it('no test commands', () => {
      setup();
      writeFileSync(join(repo, 'incrementum.toml'), '[agent]\npreset = "scripted"\n');
      failsCleanly([], /no test commands configured/);
    });

    it('an agent that is not installed', () => {
      setup();
      writeFileSync(
        join(repo, 'incrementum.toml'),
        CONFIG(['true']).replace('preset = "scripted"', 'command = ["no-such-agent-4242", "--acp"]'),
      );
      failsCleanly([], /the agent command `no-such-agent-4242` was not found on PATH/);
    });

    it('a broken template override', () => {
      setup();
      mkdirSync(join(repo, '.incrementum', 'templates'), { recursive: true });
      writeFileSync(join(repo, '.incrementum', 'templates', 'review.liquid'), '{% if Todo.ID %}unclosed');
      failsCleanly([], /review\.liquid/);
    });

    it('an unknown --rev and a bad --auto-commit', () => {
      setup();
      failsCleanly(['--rev', 'no-such-rev'], /no-such-rev/);
      failsCleanly(['--auto-commit', 'perhaps'], /--auto-commit takes true or false/);
    });
  });

  it('no todo and no terminal: a clear error', () => {
    setup();
    const r = run(['job', 'do']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--title/);
  });

  it('Ctrl-C mid-implement: job failed, workspace released, todo reopened, no agent left', async () => {
    setup();
    const s = scenario('slow', { implement: [{ actions: [{ type: 'delay', ms: 60_000 }] }] });
    const child = spawn(process.execPath, [II, 'job', 'do', '--title', 'slow'], {
      cwd: repo,
      env: { ...process.env, NO_COLOR: '1', ...env, II_SCRIPTED_SCENARIO: s },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await waitFor(
      // This job's agent: the scripted one, working under this test's dir.
      () => runningWith('scripted/main.js').some((p) => runningIn(tmp.path).includes(p)),
      'the agent to start',
    );
    await waitFor(() => stderr.includes('implementing'), 'the implementing stage');
    // HEAD is read and the change's base ref written through the runner's long-lived git processes.
    await waitFor(() => longLivedGits().length >= 2, 'the long-lived git processes');
    child.kill('SIGINT');
    const code = await new Promise<number | null>((res) => child.on('close', res));
    expect(code).toBe(1);
    const job = show(jobIdFrom(stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(/SIGINT/);
    await waitFor(() => runningWith(join(tmp.path, 'state')).length === 0, 'no process of the job left');
    await waitFor(() => longLivedGits().length === 0, 'no git process of the job left');
    const open = JSON.parse(run(['todo', 'list', '--json', '--status', 'open']).stdout) as unknown[];
    expect(open).toHaveLength(1);
  });

  it('ii job abandon stops a running job within seconds; ii job retry runs a new one linked to it', async () => {
    setup();
    const slow = scenario('slow2', { implement: [{ actions: [{ type: 'delay', ms: 60_000 }] }] });
    const child = spawn(process.execPath, [II, 'job', 'do', '--title', 'slow'], {
      cwd: repo,
      env: { ...process.env, NO_COLOR: '1', ...env, II_SCRIPTED_SCENARIO: slow },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await waitFor(() => stderr.includes('implementing'), 'the implementing stage');
    await waitFor(() => longLivedGits().length >= 2, 'the long-lived git processes');
    const id = jobIdFrom(stderr);
    const a = run(['job', 'abandon', id, '--wait']);
    expect(a.stdout).toContain('abandoned');
    expect(await new Promise<number | null>((res) => child.on('close', res))).toBe(1);
    await waitFor(() => longLivedGits().length === 0, 'no git process of the abandoned job left');
    expect(show(id).status).toBe('abandoned');

    const quick = scenario('quick', { implement: [{ actions: [write('q.txt', 'q\n')] }] });
    const r = run(['job', 'retry', id.slice(0, 6)], quick);
    expect(r.code).toBe(0);
    const retried = show(jobIdFrom(r.stderr));
    expect(retried.retried_from).toBe(id);
    expect(retried.status).toBe('completed');
  });
});
