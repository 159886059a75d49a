import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateStore, repoSlug, transcriptFile } from '../../src/state/index.js';
import { eventsFile } from '../../src/state/paths.js';
import { ii } from '../helpers/cli.js';
import { JobFixture, jobIdFrom, write } from '../helpers/job.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  tmp = tempDir();
  mkdirSync(join(tmp.path, 'repo'));
  repo = gitRepo(join(tmp.path, 'repo'));
  env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: tmp.path };
});
afterEach(() => tmp.cleanup());

const rpc = (message: object, dir = 'in') => JSON.stringify({ ts: 't', dir, message });

describe('ii job logs', () => {
  it('prints every transcript in order under a header; --json gives the raw lines', () => {
    const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
    const slug = repoSlug(repo);
    const todo = store.todos.create(slug, { title: 'x' });
    const job = store.jobs.create(slug, { todo_id: todo.id });
    for (const [purpose, id, text] of [
      ['implement', 'aaa111', 'I wrote hello.txt'],
      ['review', 'bbb222', 'Looks right.'],
    ] as const) {
      const path = transcriptFile(store.dir, job.id, id);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(
        path,
        [
          rpc(
            {
              jsonrpc: '2.0',
              id: 2,
              method: 'session/prompt',
              params: { prompt: [{ type: 'text', text: `${purpose} prompt` }] },
            },
            'out',
          ),
          rpc({
            jsonrpc: '2.0',
            method: 'session/update',
            params: { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } },
          }),
          rpc({ jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } }),
          '{"torn',
        ].join('\n'),
      );
      store.jobs.addAgentSession(job.id, { purpose, id, transcript: path });
    }
    store.jobs.addAgentSession(job.id, {
      purpose: 'commit-message',
      id: 'ccc333',
      transcript: join(tmp.path, 'missing.jsonl'),
    });
    store.close();

    const r = ii(['job', 'logs', job.id.slice(0, 5)], { cwd: repo, env });
    expect(r.code).toBe(0);
    const out = r.stdout;
    const h1 = out.indexOf('=== 1. implement · agent session aaa111');
    const h2 = out.indexOf('=== 2. review · agent session bbb222');
    expect(h1).toBeGreaterThanOrEqual(0);
    expect(h2).toBeGreaterThan(h1);
    expect(out.slice(h1, h2)).toContain('>   implement prompt');
    expect(out.slice(h1, h2)).toContain('  I wrote hello.txt');
    expect(out.slice(h2)).toContain('  Looks right.');
    expect(out).toContain('(turn ended: end_turn)');
    expect(out).toMatch(/=== 3\. commit-message · agent session ccc333.*\n {2}\(no transcript at /);

    const j = ii(['job', 'logs', job.id, '--json'], { cwd: repo, env });
    const lines = j.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            agent_session_id: string;
            purpose: string;
            entry: { message?: { method?: string }; unparsed?: string };
          },
      );
    expect(lines).toHaveLength(8);
    expect(lines[0]).toMatchObject({
      agent_session_id: 'aaa111',
      purpose: 'implement',
      entry: { message: { method: 'session/prompt' } },
    });
    expect(lines[3]).toMatchObject({ entry: { unparsed: '{"torn' } });
    expect(lines[4]!.agent_session_id).toBe('bbb222');
  });
});

describe('ii job logs with an event log', () => {
  it('follows each transcript with what the job recorded after that turn', () => {
    const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
    const slug = repoSlug(repo);
    const todo = store.todos.create(slug, { title: 'x' });
    const job = store.jobs.create(slug, { todo_id: todo.id });
    for (const [purpose, id] of [
      ['implement', 'aaa111'],
      ['review', 'bbb222'],
    ] as const)
      store.jobs.addAgentSession(job.id, { purpose, id, transcript: join(tmp.path, `${id}.jsonl`) });
    const log = [
      { type: 'agent_start', purpose: 'implement', agent_session_id: 'aaa111' },
      { type: 'stage', from: 'implementing', to: 'testing' },
      { type: 'test_start', command: 'make test' },
      { type: 'test_end', command: 'make test', exit_code: 2, duration_ms: 1500, tail: 'boom\n' },
      { type: 'tests', passed: false, results: [{ command: 'make test', exit_code: 2, duration_ms: 1500 }] },
      { type: 'agent_start', purpose: 'review', agent_session_id: 'bbb222' },
      {
        type: 'review',
        project: false,
        review: {
          outcome: 'REQUEST_CHANGES',
          comments: 'Fix it.',
          agent_session_id: 'bbb222',
          reviewed_at: 't',
        },
      },
    ];
    const path = join(store.dir, 'jobs', job.id, 'events.jsonl');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, log.map((e) => JSON.stringify({ ts: 't', ...e }) + '\n').join('') + '{"torn\n');
    store.close();

    const r = ii(['job', 'logs', job.id], { cwd: repo, env: { ...env, NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    const h2 = r.stdout.indexOf('=== 2. review');
    expect(r.stdout.slice(0, h2)).toContain(
      '→ testing\n$ make test\n  exit 2 (make test, 1.5s)\n  | boom\n  tests failed: `make test` exited 2\n',
    );
    expect(r.stdout.slice(h2)).toContain('  review: REQUEST_CHANGES — Fix it.');
    expect(r.stderr).toContain('1 line of');
    expect(r.stderr).toContain('is not an event and was skipped (line 8: not JSON');
  });
});

describe('ii job logs --tests', () => {
  it('shows every test run with its whole output, by iteration, redacted and escaped', () => {
    const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
    const slug = repoSlug(repo);
    const todo = store.todos.create(slug, { title: 'x' });
    const job = store.jobs.create(slug, { todo_id: todo.id });
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n');
    const log = [
      { type: 'agent_start', purpose: 'implement', agent_session_id: 'aaa111' },
      {
        type: 'iteration:started',
        change_id: 'c1',
        change_number: 1,
        iteration: 2,
        commit_id: 'abc',
        files: [],
      },
      { type: 'test_start', command: 'npm test' },
      { type: 'test_output', command: 'npm test', stream: 'stdout', text: `${lines}\n` },
      {
        type: 'test_output',
        command: 'npm test',
        stream: 'stderr',
        text: 'token ghp_abcdefghijklmnopqrstuvwxyz0123456789 \x1b[31mred\n',
      },
      { type: 'test_end', command: 'npm test', exit_code: 1, duration_ms: 930, tail: 'red\n' },
    ];
    const path = join(store.dir, 'jobs', job.id, 'events.jsonl');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, log.map((e) => JSON.stringify({ ts: 't', ...e }) + '\n').join(''));
    store.close();

    const r = ii(['job', 'logs', '--tests', job.id], { cwd: repo, env: { ...env, NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('=== change 1 iteration 2 · $ npm test · exit 1, 930 ms ===\nline 1\n');
    // The whole output, not only the tail the event kept.
    expect(r.stdout).toContain('line 30\n');
    expect(r.stdout).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stdout).not.toContain('agent session');
  });
});

describe("an agent's warnings", () => {
  it('are job events: ii job do shows them, ii job logs once (in its transcript), events.jsonl names the session', () => {
    const f = new JobFixture('ii-agent-warn-');
    try {
      f.setup();
      const s = f.scenario('garbage', {
        implement: [{ actions: [{ type: 'garbage', text: 'NOT JSON AT ALL' }, write('hello.txt', 'hi\n')] }],
        'commit-message': [{ actions: [{ type: 'commit_message', text: 'Add hello.txt' }] }],
      });
      const r = f.run(['job', 'do', '--title', 'say hello'], s);
      expect(r.stderr).toMatch(
        /warning: the agent wrote a line that is not JSON; skipped: "NOT JSON AT ALL"/,
      );
      const id = jobIdFrom(r.stderr);
      const job = f.show(id);
      const implement = (
        job as unknown as { agent_sessions: { id: string; purpose: string }[] }
      ).agent_sessions.find((a) => a.purpose === 'implement')!;
      const events = readFileSync(eventsFile(join(f.tmp.path, 'state', 'incrementum'), job.id), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; message?: string; agent_session_id?: string });
      expect(events.filter((e) => e.type === 'warning' && /NOT JSON AT ALL/.test(e.message ?? ''))).toEqual([
        expect.objectContaining({ agent_session_id: implement.id }),
      ]);
      const logs = f.run(['job', 'logs', id]).stdout;
      expect(logs.match(/not JSON; skipped: "NOT JSON AT ALL"/g)).toHaveLength(1);
    } finally {
      f.cleanup();
    }
  });
});

describe('ii job list', () => {
  it('cleans up a job whose runner is gone (failed, saying so) and leaves one whose runner lives', () => {
    const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
    const slug = repoSlug(repo);
    const todo = store.todos.create(slug, { title: 'x' });
    // A pid that existed and is gone: a child that already exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const gone = store.jobs.create(slug, { todo_id: todo.id, pid: Number(dead.stdout), host: hostname() });
    const live = store.jobs.create(slug, { todo_id: todo.id, pid: process.pid, host: hostname() });
    store.close();
    const r = ii(['job', 'list'], { cwd: repo, env });
    const row = (out: string, id: string) => out.split('\n').find((l) => l.startsWith(id.slice(0, 4))) ?? '';
    expect(r.stderr).toMatch(new RegExp(`^job ${gone.id} failed \\(its runner was gone\\)`));
    expect(row(r.stdout, gone.id)).toBe('');
    expect(row(r.stdout, live.id)).toMatch(/\bactive\b/);
    const all = ii(['job', 'list', '--all'], { cwd: repo, env }).stdout;
    expect(row(all, gone.id)).toMatch(/\bfailed\b/);
  });
});
