// Issue 29, real agents: with `[agent] permissions = "ask"` each real agent,
// driven offline by the scripted model server, stops on its permission
// request, the job shows `waiting`, and it carries on after `ii job answer`
// from another process. Skipped per agent only when its package cannot be
// installed because the npm registry cannot be reached.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom } from '../helpers/job.js';
import { jobModel, type ModelServer, type Step } from '../helpers/model-server.js';
import { runningIn } from '../helpers/procs.js';
import {
  agentToml,
  claudeHome,
  CLAUDE,
  ensureAgent,
  GEMINI,
  geminiHome,
  OPENCODE,
  opencodeConfig,
  opencodeHome,
  titleFor,
} from '../helpers/real-agents.js';
import { waitFor } from '../helpers/tmp.js';

let f: JobFixture | null = null;
let model: ModelServer | null = null;
afterEach(async () => {
  for (const pid of f ? runningIn(f.tmp.path) : [])
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  await model?.close();
  f?.cleanup();
  f = model = null;
});

interface Asking {
  id: string;
  status: string;
  asking: { tool_kind: string | null; title: string; command: string | null } | null;
}

/**
 * Runs a job whose agent asks once, waits for it to wait (ii job list says
 * so), answers it with `ii job answer` from another process, and returns the
 * finished job's id and the question it asked.
 */
async function askedAndAnswered(fx: JobFixture, title: string) {
  const run = fx.spawn(['job', 'do', '--title', title, '--no-edit']);
  const id = await waitFor(() => jobIdFrom(run.stderr()) || null, 'the job to start', 120_000, 100);
  const asked = await waitFor(
    () => {
      const j = JSON.parse(fx.run(['job', 'show', id, '--json']).stdout) as Asking;
      if (j.status !== 'active') throw new Error(`the job ended without asking: ${run.stderr()}`);
      return j.asking ? j : null;
    },
    'the agent to ask',
    180_000,
    200,
  );
  const list = fx.run(['job', 'list']).stdout;
  expect(list.split('\n').find((l) => l.includes(id.slice(0, 7)))).toContain('waiting');
  const answer = fx.run(['job', 'answer', id, 'allow']);
  expect(answer.code, answer.stderr).toBe(0);
  expect(await run.exit, run.stderr()).toBe(0);
  await waitFor(() => runningIn(fx.tmp.path).length === 0, 'no agent left', 30_000, 100);
  return { id, asked: asked.asking! };
}

const oc = ensureAgent(OPENCODE);
describe.skipIf('skip' in oc)(titleFor('opencode in ask mode', oc), () => {
  it(
    'asks before its bash tool runs; ii job answer allows it and the job completes',
    { timeout: 400_000 },
    async () => {
      const fx = (f = new JobFixture('ii-ask-oc-'));
      const m = (model = await jobModel('openai', {
        implement: [
          [
            { tool: 'bash', args: { command: 'echo hi > hello.txt', description: 'Write hello.txt' } },
            { text: 'Wrote hello.txt.' },
          ],
        ],
      }));
      const home = join(fx.tmp.path, 'oc-home');
      const env = opencodeHome(home, m.url);
      // Its bash tool asks the client (an ACP permission request) only when its own config says "ask".
      const cfg = JSON.parse(opencodeConfig(m.url)) as { permission: Record<string, string> };
      cfg.permission.bash = 'ask';
      writeFileSync(join(home, '.config', 'opencode', 'opencode.json'), JSON.stringify(cfg));
      fx.setup(['grep -q hi hello.txt'], {
        job: 'baseline-tests = false\n',
        agent: `${agentToml('opencode', (oc as { bin: string }).bin, env)}permissions = "ask"\n`,
      });
      const { id, asked } = await askedAndAnswered(fx, 'say hello');
      expect(asked.tool_kind).toBe('execute');
      expect(`${asked.title} ${asked.command ?? ''}`).toContain('echo hi');
      const job = fx.show(id);
      expect(job.status).toBe('completed');
      expect(job.changes[0]!.commits[0]!.files.map((x) => x.path)).toContain('hello.txt');
    },
  );
});

/** The steps of an agent's shell tool writing hello.txt, by its tool's name and arguments. */
const shell = (tool: string, args: Record<string, unknown>): Step[][] => [
  [{ tool, args }, { text: 'Wrote hello.txt.' }],
];

const cl = ensureAgent(CLAUDE);
describe.skipIf('skip' in cl)(titleFor('Claude Code in ask mode', cl), () => {
  it(
    'asks before its Bash tool runs; ii job answer allows it and the job completes',
    { timeout: 400_000 },
    async () => {
      const fx = (f = new JobFixture('ii-ask-cl-'));
      const m = (model = await jobModel('anthropic', {
        implement: shell('Bash', { command: 'echo hi > hello.txt', description: 'Write hello.txt' }),
      }));
      const home = join(fx.tmp.path, 'cl-home');
      const env = claudeHome(home, m.url);
      // Its default "auto" mode asks a classifier (a model call the scripted
      // model cannot answer) before a Bash command; "default" asks the client,
      // as an ACP permission request (as sandbox-real-agents.test.ts sets it).
      mkdirSync(join(home, '.claude'), { recursive: true });
      writeFileSync(
        join(home, '.claude', 'settings.json'),
        JSON.stringify({ permissions: { defaultMode: 'default' } }),
      );
      fx.setup(['grep -q hi hello.txt'], {
        job: 'baseline-tests = false\n',
        agent: `${agentToml('claude', (cl as { bin: string }).bin, env)}permissions = "ask"\n`,
      });
      const { id, asked } = await askedAndAnswered(fx, 'say hello');
      expect(asked.tool_kind).toBe('execute');
      const job = fx.show(id);
      expect(job.status).toBe('completed');
      expect(job.changes[0]!.commits[0]!.files.map((x) => x.path)).toContain('hello.txt');
    },
  );
});

const gm = ensureAgent(GEMINI);
describe.skipIf('skip' in gm)(titleFor('Gemini CLI in ask mode', gm), () => {
  it(
    'asks before its shell tool runs; ii job answer allows it and the job completes',
    { timeout: 400_000 },
    async () => {
      const fx = (f = new JobFixture('ii-ask-gm-'));
      const m = (model = await jobModel('gemini', {
        implement: shell('run_shell_command', {
          command: 'echo hi > hello.txt',
          description: 'Write hello.txt',
        }),
      }));
      const env = geminiHome(join(fx.tmp.path, 'gm-home'), m.url);
      fx.setup(['grep -q hi hello.txt'], {
        job: 'baseline-tests = false\n',
        agent: `${agentToml('gemini', (gm as { bin: string }).bin, env)}permissions = "ask"\n`,
      });
      const { id, asked } = await askedAndAnswered(fx, 'say hello');
      expect(asked.tool_kind).toBe('execute');
      const job = fx.show(id);
      expect(job.status).toBe('completed');
      expect(job.changes[0]!.commits[0]!.files.map((x) => x.path)).toContain('hello.txt');
    },
  );
});
