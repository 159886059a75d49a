// The first implement agent starts while the baseline tests run (its start
// overlaps theirs instead of following it), and goes on the job's record only
// when its turn comes: a job that fails at its baseline records no agent
// session, keeps no transcript of it and leaves no agent process behind.
// The sandbox is off so the test commands can look at the job's state dir.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ii } from '../helpers/cli.js';
import { jobIdFrom, type JobJson } from '../helpers/job.js';
import { runningIn } from '../helpers/procs.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';
import { testEnv } from '../helpers/env.js';
import { bwrap } from '../helpers/bwrap.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;

/** A test command that passes once the job's agent was sent initialize (bounded: 60 s), else fails. */
const AGENT_STARTED =
  'for i in $(seq 600); do grep -qs \'"method":"initialize"\' "$XDG_STATE_HOME"/incrementum/jobs/$II_JOB_ID/transcripts/*.jsonl && exit 0; sleep 0.1; done; exit 1';

function setup(tests: string[]) {
  repo = join(tmp.path, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  gitRepo(repo, {
    'README.md': '# r\n',
    'incrementum.toml':
      `[agent]\npreset = "scripted"\n\n[sandbox]\nmode = "off"\n\n` +
      `[job]\ntest-commands = ${JSON.stringify(tests)}\nauto-commit = false\n`,
  });
}

const show = (id: string) =>
  JSON.parse(ii(['job', 'show', id, '--json'], { cwd: repo, env }).stdout) as JobJson;
const events = (id: string) =>
  readFileSync(join(tmp.path, 'state', 'incrementum', 'jobs', id, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string });

beforeEach(() => {
  tmp = tempDir('ii-early-agent-');
  env = testEnv(tmp.path);
});
afterEach(() => tmp.cleanup());

describe('the first implement agent', () => {
  it('starts while the baseline tests run, and is recorded when its turn comes', () => {
    setup([AGENT_STARTED]);
    const r = ii(['job', 'do', '--title', 'anything'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    const id = jobIdFrom(r.stderr);
    const job = show(id);
    expect(job.status).toBe('completed');
    const implement = job.agent_sessions.filter((s) => s.purpose === 'implement');
    expect(implement.length).toBeGreaterThan(0);
    expect(readFileSync(implement[0]!.transcript, 'utf8')).toContain('"method":"session/prompt"');
    // On the record after the baseline, as a turn started after it always was.
    const types = events(id).map((e) => e.type);
    expect(types.indexOf('agent_start')).toBeGreaterThan(types.indexOf('baseline'));
  });

  it('of a job whose baseline fails: no session on the record, no transcript, no process left', () => {
    setup([`(${AGENT_STARTED}); exit 1`]);
    const r = ii(['job', 'do', '--title', 'anything'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(1);
    const id = jobIdFrom(r.stderr);
    const job = show(id);
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toContain('No agent turn was spent');
    expect(job.agent_sessions).toEqual([]);
    const transcripts = join(tmp.path, 'state', 'incrementum', 'jobs', id, 'transcripts');
    expect(existsSync(transcripts) ? readdirSync(transcripts) : []).toEqual([]);
    expect(runningIn(tmp.path)).toEqual([]);
  });
});

/** The marks of the hand-over trace (II_TRACE, src/proc/trace.ts), in the order written. */
function traced(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { mark: string }).mark);
}

describe('with no [workspace] setup, the first implement agent', () => {
  it('starts as the workspace is made, before the runner runs, with or without baseline tests', () => {
    for (const baseline of [true, false]) {
      repo = join(tmp.path, `repo-${baseline}`);
      execFileSync('mkdir', ['-p', repo]);
      gitRepo(repo, {
        'README.md': '# r\n',
        'incrementum.toml':
          `[agent]\npreset = "scripted"\n\n[sandbox]\nmode = "off"\n\n` +
          `[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\nbaseline-tests = ${baseline}\n`,
      });
      const trace = join(tmp.path, `trace-${baseline}.jsonl`);
      const r = ii(['job', 'do', '--title', 'anything'], { cwd: repo, env: { ...env, II_TRACE: trace } });
      expect(r.code, r.stderr).toBe(0);
      expect(show(jobIdFrom(r.stderr)).status).toBe('completed');
      const marks = traced(trace);
      expect(marks, `baseline-tests = ${baseline}`).toContain('agent_spawn');
      expect(marks.indexOf('agent_spawn')).toBeLessThan(marks.indexOf('launched'));
      // As soon as the workspace is made, before the job's records are written
      // (a Ctrl-C meanwhile stops the job through its runner: discard-early test).
      expect(marks).toContain('launch_recorded');
      expect(marks.indexOf('agent_spawn')).toBeGreaterThan(marks.indexOf('workspace'));
      expect(marks.indexOf('agent_spawn')).toBeLessThan(marks.indexOf('launch_recorded'));
      expect(marks.indexOf('agent_spawn')).toBeLessThan(marks.indexOf('run_start'));
      // One agent for the first turn: the early one was taken, not a second started.
      expect(marks.filter((m) => m === 'agent_spawn')).toHaveLength(1);
    }
    expect(runningIn(tmp.path)).toEqual([]);
  });

  it('with a [workspace] setup, still waits for it (what it mounts must be in the agent sandbox)', () => {
    repo = join(tmp.path, 'repo');
    execFileSync('mkdir', ['-p', repo]);
    gitRepo(repo, {
      'README.md': '# r\n',
      'incrementum.toml':
        `[agent]\npreset = "scripted"\n\n[sandbox]\nmode = "off"\n\n[workspace]\nsetup = ["true"]\n\n` +
        `[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\n`,
    });
    const trace = join(tmp.path, 'trace.jsonl');
    const r = ii(['job', 'do', '--title', 'anything'], { cwd: repo, env: { ...env, II_TRACE: trace } });
    expect(r.code, r.stderr).toBe(0);
    const marks = traced(trace);
    expect(marks.indexOf('agent_spawn')).toBeGreaterThan(marks.indexOf('setup_done'));
  });
});

describe('with no baseline tests, the early agent', () => {
  it('starts after the leftovers check: what it writes as it starts is not blamed on the job before', () => {
    repo = join(tmp.path, 'repo');
    execFileSync('mkdir', ['-p', repo]);
    // An agent that writes a file in the workspace as it starts, before ACP's initialize.
    const agent = [
      'sh',
      '-c',
      `echo started > agent-start.log; exec "${process.execPath}" "${join(process.cwd(), 'dist', 'agent', 'scripted', 'main.js')}"`,
    ];
    gitRepo(repo, {
      'README.md': '# r\n',
      'incrementum.toml':
        `[agent]\ncommand = ${JSON.stringify(agent)}\n\n[sandbox]\nmode = "off"\n\n` +
        `[job]\ntest-commands = ["test -f README.md"]\nauto-commit = false\nbaseline-tests = false\n`,
    });
    const trace = join(tmp.path, 'trace.jsonl');
    const r = ii(['job', 'do', '--title', 'anything'], { cwd: repo, env: { ...env, II_TRACE: trace } });
    expect(r.code, r.stderr).toBe(0);
    expect(show(jobIdFrom(r.stderr)).status).toBe('completed');
    expect(traced(trace)).toContain('agent_spawn');
    expect(runningIn(tmp.path)).toEqual([]);
  });
});

describe(`in a free workspace kept for reuse, the first implement agent${bwrap ? ' (sandboxed)' : ' (bubblewrap missing: unsandboxed)'}`, () => {
  /**
   * A first job that leaves its workspace free, then a commit that adds
   * second.txt and a test that the agent saw it: its implement turn lists
   * the workspace from its own shell (inside its sandbox) into listing.txt.
   */
  function secondJob(breakFolder?: (folder: string) => void): { id: string; marks: string[] } {
    repo = join(tmp.path, 'repo');
    execFileSync('mkdir', ['-p', repo]);
    const sandbox = `[sandbox]\nmode = "${bwrap ? 'required' : 'off'}"\n\n`;
    const toml = (tests: string[]) =>
      `[agent]\npreset = "scripted"\n\n${sandbox}[job]\ntest-commands = ${JSON.stringify(tests)}\nauto-commit = false\n`;
    gitRepo(repo, { 'README.md': '# r\n', 'incrementum.toml': toml(['test -f README.md']) });
    const first = ii(['job', 'do', '--title', 'first'], { cwd: repo, env });
    expect(first.code, first.stderr).toBe(0);
    writeFileSync(join(repo, 'second.txt'), 'new on the base\n');
    writeFileSync(
      join(repo, 'incrementum.toml'),
      toml(['test ! -e listing.txt || grep -qx second.txt listing.txt']),
    );
    execFileSync('git', ['add', '-A'], { cwd: repo });
    execFileSync('git', ['commit', '-qm', 'second'], { cwd: repo, env });
    const folders = readdirSync(join(tmp.path, 'state', 'incrementum', 'workspaces'), {
      recursive: true,
      withFileTypes: true,
    }).filter((d) => d.isFile() && d.name === '.git');
    expect(folders).toHaveLength(1);
    breakFolder?.(folders[0]!.parentPath);
    const scenarios = join(tmp.path, 'scenarios');
    mkdirSync(scenarios);
    writeFileSync(
      join(scenarios, 'default.json'),
      JSON.stringify({
        implement: [{ actions: [{ type: 'shell', command: 'ls > listing.txt' }] }],
        'commit-message': [{ actions: [{ type: 'commit_message', text: 'List' }] }],
      }),
    );
    const trace = join(tmp.path, 'trace.jsonl');
    const r = ii(['job', 'do', '--title', 'second'], {
      cwd: repo,
      env: { ...env, II_TRACE: trace, II_SCRIPTED_SCENARIO: scenarios },
    });
    expect(r.code, r.stderr).toBe(0);
    const id = jobIdFrom(r.stderr);
    expect(show(id).status).toBe('completed');
    // Its tests passed on what the agent listed: the workspace as reset, new base and all.
    const commits = show(id).changes.flatMap((c) => c.commits);
    expect(commits.some((c) => c.tests_passed && c.files.some((f) => f.path === 'listing.txt'))).toBe(true);
    expect(runningIn(tmp.path)).toEqual([]);
    return { id, marks: traced(trace) };
  }

  it('starts as the workspace is claimed, beside its reset, and is named the workspace (session/new) once it is made', () => {
    const { marks } = secondJob();
    expect(marks.filter((m) => m === 'agent_spawn')).toHaveLength(1);
    expect(marks.indexOf('agent_spawn')).toBeGreaterThan(marks.indexOf('claim'));
    expect(marks.indexOf('agent_spawn')).toBeLessThan(marks.indexOf('workspace'));
    expect(marks.indexOf('acp_session')).toBeGreaterThan(marks.indexOf('workspace'));
  });

  it('starts again when the reset fails and the folder is made again (the one it started in is gone)', () => {
    // A workspace whose .git file was deleted: no reset works in it.
    const { marks } = secondJob((folder) => rmSync(join(folder, '.git')));
    expect(marks.filter((m) => m === 'agent_spawn')).toHaveLength(2);
    const again = marks.lastIndexOf('agent_spawn');
    expect(marks.indexOf('agent_spawn')).toBeLessThan(marks.indexOf('workspace'));
    expect(again).toBeGreaterThan(marks.indexOf('workspace'));
    // The first never had its session: the workspace was never named to it.
    expect(marks.slice(0, again)).not.toContain('acp_session');
  });
});
