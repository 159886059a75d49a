// The ACP client against the real scripted agent over stdio: the happy path,
// every misbehaviour, the permission policy, fs confinement and the
// transcript; after each, no process of the agent's group may remain.
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, TURN_TEXT_KEEP, type AcpSession, type AcpTuning } from '../../src/agent/acp-session.js';
import { groupAlive } from '../../src/proc/group.js';
import type { AgentActivity, AgentSessionOptions } from '../../src/agent/types.js';
import { transcriptText } from '../../src/job-log/transcript-text.js';
import { ROOT } from '../helpers/cli.js';
import { runningIn, runningWith } from '../helpers/procs.js';
import { tempDir, waitFor } from '../helpers/tmp.js';

const SCRIPTED = join(ROOT, 'dist', 'src', 'agent', 'scripted', 'main.js');
const IMPLEMENT = 'You are working on one todo in a git workspace at /somewhere.';
// Sleeps this test process alone runs, to look for afterwards: their
// durations carry its pid, so another test run on this machine (running the
// same sleeps) is never mistaken for an agent left behind here.
const SLEEP_MUTE = `61.1${process.pid}`;
const SLEEP_PROMPT = `61.2${process.pid}`;
const SLEEP_LOGGER = `61.3${process.pid}`;

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  dir: string;
  ws: string;
  transcript: string;
  activity: AgentActivity[];
  start: (extra?: Partial<AgentSessionOptions> & AcpTuning) => Promise<AcpSession>;
}

function setup(scenario: unknown): Setup {
  const t = tempDir('ii-acp-');
  cleanups.push(t.cleanup);
  const ws = join(t.path, 'ws');
  mkdirSync(ws);
  const scenarioPath = join(t.path, 'scenario.json');
  writeFileSync(scenarioPath, JSON.stringify(scenario));
  const transcript = join(t.path, 'transcripts', 'a.jsonl');
  const activity: AgentActivity[] = [];
  return {
    dir: t.path,
    ws,
    transcript,
    activity,
    start: async (extra = {}) => {
      const s = await startAgent({
        agent: {
          name: 'scripted',
          command: [process.execPath, SCRIPTED],
          env: { II_SCRIPTED_SCENARIO: scenarioPath },
        },
        cwd: ws,
        transcriptPath: transcript,
        turnTimeoutMs: 30_000,
        onActivity: (a) => activity.push(a),
        stopGrace: { eofMs: 500, termMs: 500 },
        ...extra,
      });
      const pid = s.pid!;
      cleanups.push(async () => {
        await s.close();
        expect(groupAlive(pid)).toBe(false);
      });
      return s;
    },
  };
}

const entries = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function closedCleanly(s: AcpSession): Promise<void> {
  const pid = s.pid!;
  expect(groupAlive(pid)).toBe(true);
  await s.close();
  expect(groupAlive(pid)).toBe(false);
}

describe('ACP session with the scripted agent', () => {
  it('runs a turn: text, files, usage, transcript both ways, nothing left running', async () => {
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'message', text: 'Working on it.' },
            { type: 'write', path: 'new.txt', content: 'a\nb\n' },
            { type: 'edit', path: 'old.txt', old: 'two', new: 'TWO\nthree', style: 'opencode' },
            { type: 'plan', entries: ['write new.txt'] },
          ],
          usage: { input_tokens: 120, output_tokens: 30, cost: 0.5 },
        },
      ],
    });
    writeFileSync(join(env.ws, 'old.txt'), 'one\ntwo\n');
    const changes: string[] = [];
    const s = await env.start({ onFileChange: (f) => changes.push(f.path) });
    expect(s.id).toMatch(/^scripted-/);
    const r = await s.prompt(IMPLEMENT);
    expect(r).toEqual({
      stopReason: 'end_turn',
      text: 'Working on it.',
      usage: { input_tokens: 120, output_tokens: 30, cost: 0.5 },
    });
    expect(s.files()).toEqual([
      {
        path: 'new.txt',
        abs_path: join(env.ws, 'new.txt'),
        is_new: true,
        is_deleted: false,
        additions: 2,
        deletions: 0,
      },
      {
        path: 'old.txt',
        abs_path: join(env.ws, 'old.txt'),
        is_new: false,
        is_deleted: false,
        additions: 2,
        deletions: 1,
      },
    ]);
    expect(changes).toEqual(['new.txt', 'old.txt']);
    expect(readFileSync(join(env.ws, 'old.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    expect(s.usage()).toEqual({ input_tokens: 120, output_tokens: 30, cost: 0.5 });
    expect(env.activity).toContainEqual({ kind: 'plan', entries: ['write new.txt'] });
    await closedCleanly(s);

    const lines = entries(env.transcript);
    const methods = lines.map(
      (l) => `${String(l.dir)} ${String((l.message as Record<string, unknown>).method ?? 'response')}`,
    );
    expect(methods.slice(0, 5)).toEqual([
      'out initialize',
      'in response',
      'out session/new',
      'in response',
      'out session/prompt',
    ]);
    expect(methods).toContain('in session/update');
    expect(methods.at(-1)).toBe('in response');
    const text = transcriptText(lines).join('\n');
    expect(text).toContain('> prompt:');
    expect(text).toContain('Working on it.');
    expect(text).toContain('[edit]');
    expect(text).toContain('(turn ended: end_turn)');
  });

  it('keeps a second prompt in the same session, and counts usage across both', async () => {
    const env = setup({
      implement: [{ actions: [], usage: { input_tokens: 1, output_tokens: 2, cost: 0.1 } }],
      'auto-commit': [
        {
          actions: [{ type: 'message', text: 'ok' }],
          usage: { input_tokens: 3, output_tokens: 4, cost: 0.2 },
        },
      ],
    });
    const s = await env.start();
    await s.prompt(IMPLEMENT);
    const r = await s.prompt('Commit the work of this iteration now.');
    expect(r.text).toBe('ok');
    expect(r.usage.input_tokens).toBe(3);
    expect(r.usage.cost).toBeCloseTo(0.2);
    expect(s.usage().input_tokens).toBe(4);
    expect(s.usage().cost).toBeCloseTo(0.3);
    await closedCleanly(s);
  });

  it('ends the turn with a clear error when the agent crashes', async () => {
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'message', text: 'about to' },
            { type: 'crash', code: 7 },
          ],
        },
      ],
    });
    const s = await env.start();
    const pid = s.pid!;
    await expect(s.prompt(IMPLEMENT)).rejects.toThrow(
      /exited with code 7 during its turn[\s\S]*crashing on purpose/,
    );
    await s.close();
    expect(groupAlive(pid)).toBe(false);
    await expect(s.prompt(IMPLEMENT)).rejects.toThrow(/exited with code 7/);
  });

  // job-subcommand spec, Commands > `ii job do`, step 4: the session's topic
  // includes the job id. ACP's session/new has no title; an agent that
  // advertises sessionCapabilities.title takes one through session/set_title,
  // and one that titles its sessions itself reads the first prompt.
  describe('the session title names the job', () => {
    const TITLE = 'ii job abc12345 implement: Fix the parser';
    const sent = (path: string, method: string) =>
      entries(path)
        .map((l) => l.message as Record<string, unknown>)
        .filter((m) => m.method === method)
        .map((m) => m.params as Record<string, unknown>);
    const promptText = (p: Record<string, unknown>) => (p.prompt as { text: string }[])[0]!.text;

    it('an agent that takes titles gets it through session/set_title, and the prompt is unchanged', async () => {
      const env = setup({});
      const s = await env.start({ title: TITLE });
      await s.prompt(IMPLEMENT);
      await closedCleanly(s);
      expect(sent(env.transcript, 'session/new')[0]!._meta).toEqual({ incrementum: { title: TITLE } });
      expect(sent(env.transcript, 'session/set_title')).toEqual([{ sessionId: s.id, title: TITLE }]);
      const answered = entries(env.transcript).some(
        (l) => l.dir === 'in' && JSON.stringify(l.message).includes(`"result":{"title":"${TITLE}"}`),
      );
      expect(answered).toBe(true);
      expect(sent(env.transcript, 'session/prompt').map(promptText)).toEqual([IMPLEMENT]);
    });

    for (const how of ['refuse', 'hang'] as const)
      it(`an agent that advertises titles but ${how === 'hang' ? 'never answers' : 'refuses'} set_title: a warning, and the title on the first prompt`, async () => {
        const env = setup({});
        const s = await env.start({
          title: TITLE,
          titleTimeoutMs: 300,
          agent: {
            name: 'scripted',
            command: [process.execPath, SCRIPTED],
            env: { II_SCRIPTED_SCENARIO: join(env.dir, 'scenario.json'), II_SCRIPTED_TITLES: how },
          },
        });
        await s.prompt(IMPLEMENT);
        await closedCleanly(s);
        expect(sent(env.transcript, 'session/set_title')).toHaveLength(1);
        const warned = env.activity.filter((a) => a.kind === 'warning').map((a) => a.message);
        expect(warned).toEqual([
          how === 'hang'
            ? "the agent (scripted) did not take the session's title (no answer within 300 ms): it goes on the first prompt"
            : expect.stringMatching(
                /^the agent \(scripted\) did not take the session's title \(.*no titles today.*\): it goes on the first prompt$/,
              ),
        ]);
        expect(sent(env.transcript, 'session/prompt').map(promptText)).toEqual([`${TITLE}\n\n${IMPLEMENT}`]);
      });

    it('an agent without client titles gets it as the first line of its first prompt only', async () => {
      const env = setup({});
      const s = await env.start({
        title: TITLE,
        agent: {
          name: 'scripted',
          command: [process.execPath, SCRIPTED],
          env: { II_SCRIPTED_SCENARIO: join(env.dir, 'scenario.json'), II_SCRIPTED_TITLES: 'off' },
        },
      });
      await s.prompt(IMPLEMENT);
      await s.prompt('and then this');
      await closedCleanly(s);
      expect(sent(env.transcript, 'session/set_title')).toEqual([]);
      expect(sent(env.transcript, 'session/prompt').map(promptText)).toEqual([
        `${TITLE}\n\n${IMPLEMENT}`,
        'and then this',
      ]);
    });
  });

  it('skips a non-JSON line with a warning in the transcript', async () => {
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'garbage', text: 'DEBUG: hello there' },
            { type: 'message', text: 'still here' },
          ],
        },
      ],
    });
    const s = await env.start();
    const r = await s.prompt(IMPLEMENT);
    expect(r.text).toBe('still here');
    await closedCleanly(s);
    const warnings = entries(env.transcript).filter((e) => e.type === 'warning');
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringContaining('not JSON; skipped: "DEBUG: hello there"'),
    ]);
    expect(env.activity).toContainEqual({ kind: 'warning', message: expect.stringContaining('not JSON') });
    expect(transcriptText(entries(env.transcript)).join('\n')).toContain(
      '! the agent wrote a line that is not JSON',
    );
  });

  it('skips session updates of unknown kinds', async () => {
    const env = setup({
      implement: [{ actions: [{ type: 'unknown_update' }, { type: 'message', text: 'after' }] }],
    });
    const s = await env.start();
    expect((await s.prompt(IMPLEMENT)).text).toBe('after');
    await closedCleanly(s);
  });

  it('ends the session when a message is larger than the limit', async () => {
    const env = setup({ implement: [{ actions: [{ type: 'oversized', bytes: 300_000 }] }] });
    const s = await env.start({ maxMessageBytes: 100_000 });
    const pid = s.pid!;
    await expect(s.prompt(IMPLEMENT)).rejects.toThrow(/larger than 100000 bytes/);
    await s.close();
    expect(groupAlive(pid)).toBe(false);
  });

  it("keeps the end of a flooding turn's text, and its transcript within transcriptMaxBytes", async () => {
    // 20,000 message chunks held whole were ~1 MB of text and ~1 MB more of string pieces per 20,000.
    const env = setup({ implement: [{ actions: [{ type: 'flood', count: 20_000 }] }] });
    const s = await env.start({ transcriptMaxBytes: 256 * 1024 });
    const r = await s.prompt(IMPLEMENT);
    expect(r.text.length).toBeLessThanOrEqual(2 * TURN_TEXT_KEEP);
    expect(r.text.endsWith('flood 19999 flood 20000 ')).toBe(true);
    expect(statSync(env.transcript).size).toBeLessThanOrEqual(256 * 1024 + 4096);
    expect(entries(env.transcript).filter((e) => e.dropped)).toHaveLength(1);
    await closedCleanly(s);
  });

  it('times out a hung turn, then kills an agent that ignores EOF and SIGTERM', async () => {
    const env = setup({
      implement: [{ actions: [{ type: 'message', text: 'thinking' }, { type: 'hang' }] }],
    });
    // The start gets its own limit: by default it is capped by the short turn limit, too tight on a busy machine.
    const s = await env.start({ turnTimeoutMs: 1000, startTimeoutMs: 20_000, cancelGraceMs: 300 });
    const pid = s.pid!;
    await expect(s.prompt(IMPLEMENT)).rejects.toThrow(/took longer than 1 s .*and was cancelled/);
    await s.close();
    expect(groupAlive(pid)).toBe(false);
    expect(transcriptText(entries(env.transcript)).join('\n')).toContain('(cancelled by incrementum)');
  });

  it('ends the turn of an agent that ignores session/cancel', async () => {
    const env = setup({ implement: [{ actions: [{ type: 'message', text: 'busy' }, { type: 'hang' }] }] });
    const s = await env.start({ cancelGraceMs: 300 });
    const turn = s.prompt(IMPLEMENT);
    const failed = expect(turn).rejects.toThrow(/did not end its turn within 300 ms of session\/cancel/);
    await waitFor(() => env.activity.some((a) => a.kind === 'message'), 'the agent to start');
    await s.cancel();
    await failed;
    await closedCleanly(s);
  });

  describe('started before its workspace is made (beforeSession)', () => {
    const methods = (path: string) =>
      entries(path)
        .filter((l) => l.dir === 'out')
        .map((l) => (l.message as { method?: string }).method);

    it('is initialized at once, named the workspace only once it is made, and the wait is off its start clock', async () => {
      const env = setup({});
      let made = () => {};
      const ready = new Promise<void>((r) => (made = r));
      const START_MS = 4000;
      const starting = env.start({ beforeSession: ready, startTimeoutMs: START_MS });
      // Initialize answered: its start so far is done, and waits.
      await waitFor(
        () =>
          entries(env.transcript).some(
            (l) => l.dir === 'in' && JSON.stringify(l.message).includes('"protocolVersion"'),
          ),
        'initialize to be answered',
      );
      // Held past its whole start limit: the workspace's making is not the agent's start.
      await new Promise((r) => setTimeout(r, START_MS + 500));
      expect(methods(env.transcript)).toEqual(['initialize']);
      made();
      const s = await starting;
      await waitFor(() => methods(env.transcript).length > 1, 'session/new in the transcript');
      expect(methods(env.transcript)).toEqual(['initialize', 'session/new']);
      await s.prompt(IMPLEMENT);
      await closedCleanly(s);
    });

    it('fails to start, leaving no process, when the workspace could not be made', async () => {
      const env = setup({});
      let failed = (_: Error) => {};
      const ready = new Promise<void>((_, reject) => (failed = reject));
      const starting = startAgent({
        agent: { name: 'scripted', command: [process.execPath, SCRIPTED], env: {} },
        cwd: env.ws,
        transcriptPath: env.transcript,
        turnTimeoutMs: 30_000,
        beforeSession: ready,
        stopGrace: { eofMs: 500, termMs: 500 },
      });
      await waitFor(
        () =>
          entries(env.transcript).some(
            (l) => l.dir === 'in' && JSON.stringify(l.message).includes('"protocolVersion"'),
          ),
        'initialize to be answered',
      );
      expect(runningIn(env.ws)).not.toEqual([]);
      failed(new Error('the workspace was made again'));
      await expect(starting).rejects.toThrow('the workspace was made again');
      expect(methods(env.transcript)).toEqual(['initialize']);
      expect(runningIn(env.ws)).toEqual([]);
    });
  });

  it('fails to start an agent that never answers initialize', async () => {
    const env = setup({});
    await expect(
      startAgent({
        agent: { name: 'mute', command: ['sleep', SLEEP_MUTE], env: {} },
        cwd: env.ws,
        transcriptPath: env.transcript,
        turnTimeoutMs: 10_000,
        startTimeoutMs: 500,
        stopGrace: { eofMs: 200, termMs: 200 },
      }),
    ).rejects.toThrow(/did not finish starting within 500 ms/);
    expect(runningWith(`sleep ${SLEEP_MUTE}`)).toEqual([]);
  });

  describe('a command that is not an ACP agent fails at once, naming what it wrote', () => {
    // A start limit far above what the checks need: without them the start
    // waits it out and fails with "did not finish starting", which the
    // expectations below reject.
    const notAnAgent = (name: string, script: string) => {
      const env = setup({});
      return startAgent({
        agent: { name, command: ['sh', '-c', script], env: {} },
        cwd: env.ws,
        transcriptPath: env.transcript,
        turnTimeoutMs: 120_000,
        startTimeoutMs: 50_000,
        stopGrace: { eofMs: 200, termMs: 200 },
      });
    };

    it('records what it wrote on stderr in the transcript, line by line: lines split across writes joined, CRs and blank lines dropped, a last line with no newline kept', async () => {
      const env = setup({});
      const err = await startAgent({
        agent: {
          name: 'stderr-logger',
          command: [
            'sh',
            '-c',
            "printf 'loading\\r\\n\\nmodel unreachable: ' >&2; sleep 0.2; printf 'ECONNREFUSED\\ngiving up' >&2; exit 3",
          ],
          env: {},
        },
        cwd: env.ws,
        transcriptPath: env.transcript,
        turnTimeoutMs: 120_000,
        startTimeoutMs: 50_000,
        stopGrace: { eofMs: 200, termMs: 200 },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      const logged = await waitFor(() => {
        const got = entries(env.transcript).filter((e) => e.type === 'stderr');
        return got.length >= 3 ? got : null;
      }, 'the stderr lines in the transcript');
      expect(logged.map((e) => e.message)).toEqual([
        'loading',
        'model unreachable: ECONNREFUSED',
        'giving up',
      ]);
      expect(logged.every((e) => typeof e.t === 'number')).toBe(true);
    });

    it('an agent that exits while starting: the reason is its exit and its stderr, not "ACP connection closed"', async () => {
      // Read stdin first so the initialize request is on its way: the
      // connection then closes under a pending request, as when a sandboxed
      // agent dies at start.
      const err = await notAnAgent(
        'dies',
        "head -c 1 >/dev/null; echo 'fatal: cannot open the model config' >&2; exit 3",
      ).catch((e: unknown) => e);
      expect(String(err)).toContain(
        'the agent (dies) exited with code 3; its last output on stderr:\nfatal: cannot open the model config',
      );
      expect(String(err)).not.toMatch(/connection closed/i);
    });

    it('a banner, then exit', async () => {
      const err = await notAnAgent(
        'banner',
        "printf '\\033[31mWelcome\\033[0m to FooCLI 1.2\\nUsage: foo [--acp]\\n'; exit 0",
      ).catch((e: unknown) => e);
      expect(String(err)).toMatch(
        /the agent \(banner\) does not speak ACP: before any JSON-RPC message it wrote "\\x1b\[31mWelcome\\x1b\[0m to FooCLI 1\.2\\nUsage: foo \[--acp\]\\n" on stdout\. Check that `sh -c .*` starts it in its ACP mode/,
      );
      expect(String(err)).not.toContain('\x1b');
    });

    it('a prompt with no newline, then waiting forever: stopped, nothing left running', async () => {
      const err = await notAnAgent(
        'prompter',
        `printf '  Continue? [y/N] '; exec sleep ${SLEEP_PROMPT}`,
      ).catch((e: unknown) => e);
      expect(String(err)).toMatch(
        /\(prompter\) does not speak ACP: .* wrote "Continue\? \[y\/N\] " on stdout/,
      );
      await waitFor(() => runningWith(`sleep ${SLEEP_PROMPT}`).length === 0, 'the agent to be stopped');
    });

    it('JSON that is not JSON-RPC, then waiting forever', async () => {
      const err = await notAnAgent(
        'logger',
        `echo '{"level":"info","msg":"listening"}'; exec sleep ${SLEEP_LOGGER}`,
      ).catch((e: unknown) => e);
      expect(String(err)).toContain('wrote "{"level":"info","msg":"listening"}" on stdout');
      await waitFor(() => runningWith(`sleep ${SLEEP_LOGGER}`).length === 0, 'the agent to be stopped');
    });
  });

  it('says so when the agent binary does not exist', async () => {
    const env = setup({});
    await expect(
      startAgent({
        agent: { name: 'ghost', command: [join(env.dir, 'no-such-agent')], env: {} },
        cwd: env.ws,
        transcriptPath: env.transcript,
        turnTimeoutMs: 10_000,
      }),
    ).rejects.toThrow(/cannot start agent ghost: .*no-such-agent was not found/);
  });

  it('kills what the agent started in its group, even when it refuses to stop', async () => {
    const env = setup({
      implement: [
        { actions: [{ type: 'shell', command: 'sleep 60 & echo $! > bg.pid' }, { type: 'stubborn' }] },
      ],
    });
    const s = await env.start();
    await s.prompt(IMPLEMENT);
    const bg = Number(readFileSync(join(env.ws, 'bg.pid'), 'utf8'));
    expect(bg).toBeGreaterThan(0);
    await closedCleanly(s);
    await waitFor(() => !alive(bg), 'the background sleep to be killed', 3000);
  });

  it('answers permissions by policy: allow inside the workspace, reject outside', async () => {
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'permission', path: 'inside.txt' },
            { type: 'message', text: '|' },
            { type: 'permission' },
            { type: 'message', text: '|' },
            { type: 'permission', path: 'link/escape.txt' },
          ],
        },
      ],
    });
    symlinkSync(env.dir, join(env.ws, 'link'));
    const s = await env.start();
    const r = await s.prompt(IMPLEMENT);
    expect(r.text).toBe('permission: selected allow|permission: selected reject|permission: selected reject');
    await closedCleanly(s);
  });

  it('a request for a person: their wait does not count against the turn timeout; outside is rejected unasked', async () => {
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'permission', command: 'true' },
            { type: 'message', text: '|' },
            { type: 'permission' },
          ],
        },
      ],
    });
    const asked: string[] = [];
    const s = await env.start({
      turnTimeoutMs: 1000,
      permissions: { mode: 'ask', allowCommands: [], allowKinds: [], always: [] },
      // A person slower than the whole turn may take.
      askPerson: async (ask) => {
        asked.push(ask.command ?? ask.title);
        await new Promise((r) => setTimeout(r, 1600));
        return { outcome: 'reject', note: 'not now' };
      },
    });
    const r = await s.prompt(IMPLEMENT);
    expect(r.text).toBe('permission: selected reject note: not now|permission: selected reject');
    // The second request named a file outside the workspace: nobody was asked.
    expect(asked).toEqual(['true']);
    await closedCleanly(s);
  });

  it('a cancel while a person is asked answers the request cancelled and aborts the wait', async () => {
    const env = setup({ implement: [{ actions: [{ type: 'permission', command: 'true' }] }] });
    let aborted = false;
    let asking = false;
    const s = await env.start({
      permissions: { mode: 'ask-commands', allowCommands: [], allowKinds: [], always: [] },
      askPerson: (_ask, signal) =>
        new Promise((resolve) => {
          asking = true;
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve({ outcome: 'cancelled', note: null });
          });
        }),
    });
    const turn = s.prompt(IMPLEMENT);
    await waitFor(() => asking, 'the request to reach the person');
    await s.cancel();
    const r = await turn.catch((e: Error) => ({ text: e.message, stopReason: 'error' }));
    expect(aborted).toBe(true);
    expect(r.text).toContain('permission: cancelled');
    await closedCleanly(s);
  });

  it("the workspace's .git: fs writes and reads refused with the reason, edit permissions rejected", async () => {
    const link = 'gitdir: /somewhere/.git/worktrees/ws-1\n';
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'write', path: '.git', content: 'gitdir: /the/user/repo/.git\n', style: 'fs' },
            { type: 'message', text: '|' },
            { type: 'read', path: 'sub/../.git' },
            { type: 'message', text: '|' },
            { type: 'permission', path: '.git' },
            { type: 'message', text: '|' },
            { type: 'permission', path: 'nested/.git/config' },
          ],
        },
      ],
    });
    writeFileSync(join(env.ws, '.git'), link);
    const s = await env.start();
    const r = await s.prompt(IMPLEMENT);
    const [w, rd, p1, p2] = r.text.split('|');
    expect(w).toMatch(
      /^write refused: .*refused the agent access to \S*\/ws\/\.git: .*link to its git repository/,
    );
    expect(rd).toMatch(/^read refused: .*refused the agent access to \S*\/ws\/sub\/\.\.\/\.git: /);
    expect([p1, p2]).toEqual(['permission: selected reject', 'permission: selected reject']);
    expect(readFileSync(join(env.ws, '.git'), 'utf8')).toBe(link);
    await closedCleanly(s);
  });

  it('answers permission requests after a cancel with cancelled', async () => {
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'stubborn' },
            { type: 'message', text: 'ready' },
            { type: 'delay', ms: 400 },
            { type: 'permission', path: 'inside.txt' },
          ],
        },
      ],
    });
    const s = await env.start();
    const turn = s.prompt(IMPLEMENT);
    await waitFor(
      () => env.activity.some((a) => a.kind === 'message' && a.text === 'ready'),
      'the agent to start',
    );
    await s.cancel();
    const r = await turn;
    expect(r.text).toBe('readypermission: cancelled');
    await closedCleanly(s);
  });

  it('ends a cancelled turn with stopReason cancelled', async () => {
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'message', text: 'go' },
            { type: 'delay', ms: 500 },
            { type: 'write', path: 'late.txt', content: 'x' },
          ],
        },
      ],
    });
    const s = await env.start();
    const turn = s.prompt(IMPLEMENT);
    await waitFor(() => env.activity.some((a) => a.kind === 'message'), 'the agent to start');
    await s.cancel();
    expect((await turn).stopReason).toBe('cancelled');
    expect(s.files()).toEqual([]);
    await closedCleanly(s);
  });

  it('serves fs/read_text_file and fs/write_text_file only inside the workspace', async () => {
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'read', path: 'mine.txt' },
            { type: 'message', text: '|' },
            { type: 'read', path: '../secret.txt' },
            { type: 'message', text: '|' },
            { type: 'read', path: 'link/secret.txt' },
            { type: 'write', path: 'via-fs.txt', content: 'through the client\n', style: 'fs' },
          ],
        },
      ],
    });
    writeFileSync(join(env.ws, 'mine.txt'), 'hello');
    writeFileSync(join(env.dir, 'secret.txt'), 'top secret');
    symlinkSync(env.dir, join(env.ws, 'link'));
    const s = await env.start();
    const r = await s.prompt(IMPLEMENT);
    const [mine, up, link] = r.text.split('|');
    expect(mine).toBe('read ok: hello');
    expect(up).toMatch(/^read refused: .*outside the workspace/);
    expect(link).toMatch(/^read refused: .*outside the workspace/);
    expect(r.text).not.toContain('top secret');
    expect(readFileSync(join(env.ws, 'via-fs.txt'), 'utf8')).toBe('through the client\n');
    expect(s.files()).toEqual([
      {
        path: 'via-fs.txt',
        abs_path: join(env.ws, 'via-fs.txt'),
        is_new: true,
        is_deleted: false,
        additions: 1,
        deletions: 0,
      },
    ]);
    await closedCleanly(s);
  });

  it('answers a read of a file that does not exist with ACP resource-not-found (-32002), which agents take as "create it"', async () => {
    const env = setup({
      implement: [
        {
          actions: [
            { type: 'read', path: 'new.txt' },
            { type: 'message', text: '|' },
            { type: 'read', path: 'new-dir/new.txt' },
            { type: 'message', text: '|' },
            { type: 'read', path: 'a-dir' },
          ],
        },
      ],
    });
    mkdirSync(join(env.ws, 'a-dir'));
    const s = await env.start();
    const r = await s.prompt(IMPLEMENT);
    const [file, nested, dir] = r.text.split('|');
    expect(file).toBe(`read refused: Resource not found: ${join(env.ws, 'new.txt')} (-32002)`);
    expect(nested).toBe(`read refused: Resource not found: ${join(env.ws, 'new-dir', 'new.txt')} (-32002)`);
    // Anything else that cannot be read stays a plain failure.
    expect(dir).toMatch(/^read refused: Invalid params: EISDIR.* \(-32602\)$/);
    await closedCleanly(s);
  });
});

describe('the workspace sandbox over the ACP wire, on real links', () => {
  /** A workspace holding every link shape that leads out of it, and the directory outside. */
  function escapes(scenario: unknown) {
    const env = setup(scenario);
    const out = join(env.dir, 'out');
    mkdirSync(join(out, 'deep'), { recursive: true });
    writeFileSync(join(out, 'secret.txt'), 'top secret');
    symlinkSync(join(out, 'new.txt'), join(env.ws, 'dangling'));
    symlinkSync(out, join(env.ws, 'out-dir'));
    symlinkSync('dangling', join(env.ws, 'chain'));
    symlinkSync('chain', join(env.ws, 'chain2'));
    symlinkSync(join(out, 'deep'), join(env.ws, 'deep-dir'));
    symlinkSync(join(out, 'secret.txt'), join(env.ws, 'secret-link'));
    symlinkSync('secret-link', join(env.ws, 'secret-chain'));
    return { env, out, outside: () => readdirSync(out, { recursive: true }).map(String).sort() };
  }
  const SHAPES = ['dangling', 'out-dir/new.txt', 'chain2', 'deep-dir/../new.txt'];

  it('fs/write_text_file through a dangling link, a linked dir, a chain or `..` after a link: refused, nothing outside', async () => {
    const { env, outside } = escapes({
      implement: [
        {
          actions: [
            ...SHAPES.flatMap((path) => [
              { type: 'write', path, content: 'escaped\n', style: 'fs' },
              { type: 'message', text: '|' },
            ]),
            { type: 'write', path: 'inside.txt', content: 'fine\n', style: 'fs' },
          ],
        },
      ],
    });
    const s = await env.start();
    const r = await s.prompt(IMPLEMENT);
    const answers = r.text.split('|').slice(0, -1);
    expect(answers).toHaveLength(SHAPES.length);
    for (const a of answers) expect(a).toMatch(/^write refused: .*outside the workspace/);
    expect(outside()).toEqual(['deep', 'secret.txt']);
    expect(readFileSync(join(env.ws, 'inside.txt'), 'utf8')).toBe('fine\n');
    expect(s.files().map((f) => f.path)).toEqual(['inside.txt']);
    await closedCleanly(s);
    const warnings = entries(env.transcript).filter((e) => e.type === 'warning');
    expect(warnings.map((w) => w.message)).toEqual(
      SHAPES.map((p) => expect.stringContaining(`refused the agent access to ${env.ws}/${p}`)),
    );
  });

  it('fs/read_text_file through the same shapes: refused, nothing read', async () => {
    const reads = ['secret-link', 'secret-chain', 'out-dir/secret.txt', 'deep-dir/../secret.txt'];
    const { env } = escapes({
      implement: [
        {
          actions: reads.flatMap((path) => [
            { type: 'read', path },
            { type: 'message', text: '|' },
          ]),
        },
      ],
    });
    const s = await env.start();
    const r = await s.prompt(IMPLEMENT);
    expect(r.text).not.toContain('top secret');
    for (const a of r.text.split('|').slice(0, -1))
      expect(a).toMatch(/^read refused: .*outside the workspace/);
    await closedCleanly(s);
  });

  it('permission requests for the same shapes are rejected, a link that stays inside is allowed', async () => {
    const { env } = escapes({
      implement: [
        {
          actions: [...SHAPES, 'alias'].flatMap((path) => [
            { type: 'permission', path },
            { type: 'message', text: '|' },
          ]),
        },
      ],
    });
    writeFileSync(join(env.ws, 'mine.txt'), 'mine');
    symlinkSync('mine.txt', join(env.ws, 'alias'));
    const s = await env.start();
    const r = await s.prompt(IMPLEMENT);
    expect(r.text.split('|').slice(0, -1)).toEqual([
      ...SHAPES.map(() => 'permission: selected reject'),
      'permission: selected allow',
    ]);
    await closedCleanly(s);
  });

  it('writes while the agent keeps swapping links in and out: none lands outside', async () => {
    // A loop in the agent's own process group flips `d` and `f` between
    // nothing (or what the client just made there) and a link out, while
    // the agent asks the client to write both, over and over. Whichever
    // state a check sees, the write must not follow what replaced it.
    const { env, out, outside } = escapes({ implement: [] });
    // In node, not a shell loop: a flip every few microseconds, not milliseconds, so checks and writes do interleave with it.
    const flipper = [
      "const fs = require('node:fs');",
      "fs.writeFileSync('flipping', '');",
      'for (;;) for (const [name, to] of [["d", process.argv[2]], ["f", process.argv[2] + "/f.txt"]]) {',
      '  try { fs.symlinkSync(to, name); } catch {}',
      '  try { fs.rmSync(name, { recursive: true, force: true }); } catch {}',
      '}',
    ].join('\n');
    writeFileSync(join(env.dir, 'flipper.cjs'), flipper);
    const flip = `'${process.execPath}' '${join(env.dir, 'flipper.cjs')}' '${out}'`;
    const writes = Array.from({ length: 150 }, () => [
      { type: 'write', path: 'd/new.txt', content: 'x', style: 'fs' },
      { type: 'write', path: 'f', content: 'x', style: 'fs' },
    ]).flat();
    writeFileSync(
      join(env.dir, 'scenario.json'),
      JSON.stringify({
        implement: [
          {
            actions: [
              {
                type: 'shell',
                command: `${flip} >/dev/null 2>&1 & while [ ! -e flipping ]; do sleep 0.01; done`,
              },
              ...writes,
            ],
          },
        ],
      }),
    );
    const s = await env.start();
    const r = await s.prompt(IMPLEMENT);
    await closedCleanly(s); // stops the flipper with the agent's group
    expect(outside()).toEqual(['deep', 'secret.txt']);
    // Some checks saw a link: the flipper was running while the writes were.
    expect(r.text).toContain('write refused');
  });
});

function alive(pid: number): boolean {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = st.slice(st.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
