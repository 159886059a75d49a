// [agent] permissions = "ask" end to end: the built CLI, a real git repo and
// the real scripted agent, which asks for a permission (an execute with a
// command, an edit with a path) and acts on the answer. A person answers from
// another process with `ii job answer`; the runner replies to the agent.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, write, type RunningJob } from '../helpers/job.js';
import { runningWith } from '../helpers/procs.js';
import { waitFor } from '../helpers/tmp.js';

interface AskJson {
  id: number;
  tool_kind: string | null;
  command: string | null;
  paths: string[];
  outcome: string | null;
}
interface Listed {
  id: string;
  status: string;
  asking: AskJson | null;
  waited_ms: number;
}

let f: JobFixture;
/** Jobs a test started: a failed assertion must not leave one waiting for its 30-minute ask-timeout. */
let started: RunningJob[] = [];
beforeEach(() => {
  f = new JobFixture('ii-ask-');
  started = [];
});
afterEach(async () => {
  for (const j of started)
    if (j.child.exitCode === null && j.child.signalCode === null) {
      j.child.kill('SIGTERM');
      await j.exit;
    }
  f.cleanup();
});

/** `ii job do` in the background, ended after the test whatever happens. */
function spawnJob(args: string[], scenario: string): RunningJob {
  const j = f.spawn(args, scenario);
  started.push(j);
  return j;
}

const agentSection = (extra: string) => `preset = "scripted"\n${extra}\n`;
const askCommand = (command: string) => ({ type: 'permission', command });

const listed = (): Listed[] => JSON.parse(f.run(['job', 'list', '--json']).stdout) as Listed[];

/** Waits until the job started by `j` waits for a person; its id and the open request. */
async function waiting(j: RunningJob): Promise<{ id: string; ask: AskJson }> {
  let found: Listed | undefined;
  await waitFor(
    () => {
      const id = jobIdFrom(j.stderr());
      found = id ? listed().find((x) => x.id === id && x.asking) : undefined;
      return found !== undefined;
    },
    'the job to wait for a person',
    60_000,
  );
  return { id: found!.id, ask: found!.asking! };
}

/** The agent's messages about its permission answers, from the job's implement transcripts. */
function permissionMessages(id: string): string[] {
  const out: string[] = [];
  for (const a of f.show(id).agent_sessions.filter((s) => s.purpose === 'implement'))
    for (const m of readFileSync(a.transcript, 'utf8').matchAll(/"text":"(permission: [^"]*)"/g))
      out.push(m[1]!);
  return out;
}

describe('a job in ask mode', () => {
  it('waits, shows as waiting, is answered by ii job answer from another process and completes', async () => {
    f.setup(undefined, { agent: agentSection('permissions = "ask"') });
    const s = f.scenario('ask', {
      implement: [{ actions: [askCommand('touch ran-it.txt'), write('a.txt', 'a\n')] }],
    });
    const j = spawnJob(['job', 'do', '--title', 'ask me'], s);
    const { id, ask } = await waiting(j);
    expect(ask).toMatchObject({ tool_kind: 'execute', command: 'touch ran-it.txt', outcome: null });
    // The table says waiting; show has the question and how to answer it.
    expect(f.run(['job', 'list']).stdout).toMatch(new RegExp(`${id.slice(0, 4)}.*waiting`));
    expect(
      (JSON.parse(f.run(['job', 'list', '--status', 'waiting', '--json']).stdout) as Listed[]).map(
        (x) => x.id,
      ),
    ).toEqual([id]);
    const shown = f.run(['job', 'show', id]).stdout;
    expect(shown).toContain('waiting:');
    expect(shown).toContain('touch ran-it.txt');
    expect(shown).toContain(`ii job answer ${id}`);

    const a = f.run(['job', 'answer', id.slice(0, 6), 'allow']);
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('allow');
    expect(await j.exit).toBe(0);
    const job = f.show(id) as ReturnType<JobFixture['show']> & { waited_ms: number; asking: unknown };
    expect(job.status).toBe('completed');
    expect(job.asking).toBeNull();
    expect(job.waited_ms).toBeGreaterThan(0);
    // The agent was allowed and ran its command: its file is in the change.
    expect(permissionMessages(id)).toEqual(['permission: selected allow']);
    expect(job.changes[0]!.commits[0]!.files.map((x) => x.path).sort()).toEqual(['a.txt', 'ran-it.txt']);
    const after = f.run(['job', 'show', id]).stdout;
    expect(after).toMatch(/waited: .* over 1 request/);
    expect(after).toMatch(/allow +after/);
    // The journal counts the wait apart from the job's own time.
    const journal = readFileSync(join(f.tmp.path, 'state', 'incrementum', 'jobs', id, 'journal.md'), 'utf8');
    expect(journal).toMatch(/- Waited for a person: .* · Working time without the waits: /);
    expect(f.run(['job', 'list', '--status', 'waiting']).stdout).toContain('No waiting jobs');
    // A job no longer waiting refuses an answer, saying why.
    const again = f.run(['job', 'answer', id, 'reject']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/is completed/);
  });

  it('reject: the agent sees a rejection with the note, and the job goes on', async () => {
    f.setup(undefined, { agent: agentSection('permissions = "ask"') });
    const s = f.scenario('reject', {
      implement: [{ actions: [askCommand('touch ran-it.txt'), write('a.txt', 'a\n')] }],
    });
    const j = spawnJob(['job', 'do', '--title', 'reject me'], s);
    const { id } = await waiting(j);
    expect(f.run(['job', 'answer', id, 'reject', '--note', 'use make instead']).code).toBe(0);
    expect(await j.exit).toBe(0);
    expect(permissionMessages(id)).toEqual(['permission: selected reject note: use make instead']);
    const job = f.show(id);
    expect(job.status).toBe('completed');
    expect(job.changes[0]!.commits[0]!.files.map((x) => x.path)).toEqual(['a.txt']);
  });

  it('an unanswered request is rejected at [agent] ask-timeout, with a note in the transcript; the job goes on', () => {
    f.setup(undefined, { agent: agentSection('permissions = "ask"\nask-timeout = "1s"') });
    const s = f.scenario('timeout', {
      implement: [{ actions: [askCommand('touch ran-it.txt'), write('a.txt', 'a\n')] }],
    });
    const r = f.run(['job', 'do', '--title', 'nobody answers'], s);
    expect(r.code).toBe(0);
    const id = jobIdFrom(r.stderr);
    expect(permissionMessages(id)).toEqual(['permission: selected reject']);
    const transcript = readFileSync(f.show(id).agent_sessions[0]!.transcript, 'utf8');
    expect(transcript).toContain('no answer within');
    expect(r.stderr).toContain('rejected: no answer');
    expect(f.run(['job', 'show', id]).stdout).toMatch(/timeout +after/);
  });

  it('abandoned while waiting: the request is cancelled and the job ends cleanly, no process left', async () => {
    f.setup(undefined, { agent: agentSection('permissions = "ask"') });
    const s = f.scenario('abandon', { implement: [{ actions: [askCommand('touch ran-it.txt')] }] });
    const j = spawnJob(['job', 'do', '--title', 'abandon me'], s);
    const { id, ask } = await waiting(j);
    expect(f.run(['job', 'abandon', id, '--wait']).code).toBe(0);
    expect(await j.exit).toBe(1);
    const job = f.show(id) as ReturnType<JobFixture['show']> & { asking: unknown };
    expect(job.status).toBe('abandoned');
    expect(f.run(['job', 'show', id]).stdout).toMatch(/cancelled +after/);
    expect(ask.outcome).toBeNull();
    await waitFor(() => runningWith(join(f.tmp.path, 'state')).length === 0, 'no process of the job left');
    expect(existsSync(join(f.repo, 'ran-it.txt'))).toBe(false);
  });

  it('ask-commands asks for a command and not for an edit; [agent.allow] lets a command prefix through', async () => {
    f.setup(undefined, {
      agent: agentSection('permissions = "ask-commands"\nallow = { commands = ["cp README.md"] }'),
    });
    const s = f.scenario('commands', {
      implement: [
        {
          actions: [
            { type: 'permission', path: 'edited.txt', content: 'e\n' },
            askCommand('cp README.md copied.txt'),
            askCommand('touch asked.txt'),
          ],
        },
      ],
    });
    const j = spawnJob(['job', 'do', '--title', 'commands'], s);
    const { id, ask } = await waiting(j);
    // The edit and the allowed prefix went through without asking: the one question is the last command.
    expect(ask.command).toBe('touch asked.txt');
    expect(f.run(['job', 'answer', id, 'allow']).code).toBe(0);
    expect(await j.exit).toBe(0);
    expect(permissionMessages(id)).toEqual([
      'permission: selected allow',
      'permission: selected allow',
      'permission: selected allow',
    ]);
    const files = f
      .show(id)
      .changes[0]!.commits[0]!.files.map((x) => x.path)
      .sort();
    expect(files).toEqual(['asked.txt', 'copied.txt', 'edited.txt']);
  });

  it('allow-always: later requests of the job with the same kind and first two command words pass unasked', async () => {
    f.setup(undefined, { agent: agentSection('permissions = "ask"') });
    const s = f.scenario('always', {
      implement: [{ actions: [askCommand('cp README.md one.txt'), askCommand('cp README.md two.txt')] }],
    });
    const j = spawnJob(['job', 'do', '--title', 'always'], s);
    const { id } = await waiting(j);
    expect(f.run(['job', 'answer', id, 'allow-always']).code).toBe(0);
    expect(await j.exit).toBe(0);
    // The agent is answered with its once-option both times: "always" is kept by incrementum.
    expect(permissionMessages(id)).toEqual(['permission: selected allow', 'permission: selected allow']);
    expect(
      f
        .show(id)
        .changes[0]!.commits[0]!.files.map((x) => x.path)
        .sort(),
    ).toEqual(['one.txt', 'two.txt']);
    expect(f.run(['job', 'show', id]).stdout).toMatch(/over 1 request/);
  });
});
