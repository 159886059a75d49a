// What the tests of a whole job with a real agent (Claude Code, Gemini CLI,
// opencode) share: a repository whose agent is the real one pointed at a
// scripted model server, both ended after each test, and the job all of them
// run first (create hello.txt, edit README.md) with what it must leave.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { JobFixture, jobIdFrom } from './job.js';
import type { PromptKind } from '../../src/agent/scripted/scenario.js';
import { jobModel, type ModelServer, type Step, type WireName } from './model-server.js';
import { runningIn } from './procs.js';
import { agentToml } from './real-agents.js';
import { waitFor } from './tmp.js';

export interface RealAgent {
  /** Its preset in incrementum.toml ([agent] preset). */
  preset: string;
  /** What ensureAgent said: where it is installed (or why its tests are skipped). */
  installed: { bin: string } | { skip: string };
  /** The HOME (and variables) that point it at the model server. */
  home(dir: string, baseURL: string): Record<string, string>;
}

export type JobScript = Partial<Record<PromptKind, Step[][]>>;

/**
 * The repositories a test file's jobs run in: `start` makes one whose agent
 * is `agent` on a model server speaking `wire` that plays `script`, and whose
 * test commands are `tests` (they check the agent's work, so they fail on the
 * untouched base: no baseline run). Registers the afterEach that closes the
 * server and removes the repository.
 */
export function realAgentJobs(agent: RealAgent, wire: WireName, prefix: string) {
  let fx: JobFixture | null = null;
  let model: ModelServer | null = null;
  afterEach(async () => {
    await model?.close();
    fx?.cleanup();
    fx = model = null;
  });
  return {
    async start(script: JobScript, tests: string[]) {
      const f = (fx = new JobFixture(prefix));
      const m = (model = await jobModel(wire, script));
      const env = agent.home(join(f.tmp.path, `${agent.preset}-home`), m.url);
      const { bin } = agent.installed as { bin: string }; // start runs only where it is installed
      f.setup(tests, { job: 'baseline-tests = false\n', agent: agentToml(agent.preset, bin, env) });
      return { fx: f, model: m };
    },
  };
}

/** The hello job's tests: the agent's new file and its edit of README.md are there. */
export const HELLO_TESTS = ['grep -q hi hello.txt', 'grep -q "Says hello" README.md'];

/**
 * Runs `ii job do --title 'say hello'` and checks what the hello job must
 * leave: completed in one iteration with both files, the verdicts and the
 * commit message written through the agent's own tools, no tool call failed,
 * and none of the agent's processes left.
 */
export async function expectHelloJob(
  fx: JobFixture,
  model: ModelServer & { sessions: Partial<Record<PromptKind, number>> },
  agentName: string,
): Promise<void> {
  const r = await fx.runAsync(['job', 'do', '--title', 'say hello']);
  expect(r.stderr).toContain('completed');
  expect(r.code).toBe(0);
  const job = fx.show(jobIdFrom(r.stderr));
  expect(job.status).toBe('completed');
  const [c] = job.changes[0]!.commits;
  expect(c!.files.map((x) => x.path).sort()).toEqual(['README.md', 'hello.txt']);
  expect(c!.tests_passed).toBe(true);
  expect(c!.review).toMatchObject({ outcome: 'ACCEPT', comments: 'Looks right.' });
  // Its comments prove the verdict was written (a missing file counts as ACCEPT).
  expect(job.project_review).toMatchObject({ outcome: 'ACCEPT', comments: 'All done.' });
  expect(model.sessions).toEqual({ implement: 2, review: 1, 'commit-message': 1, 'project-review': 1 });
  // Every tool call of every session worked: none failed, the new file's least of all.
  for (const a of job.agent_sessions)
    expect(readFileSync(a.transcript, 'utf8')).not.toContain('"status":"failed"');
  const sha = r.stdout.trim();
  const msg = fx.git('log', '-1', '--format=%B', sha);
  expect(msg).toContain('feat: say hello');
  expect(msg).toContain('The todo asks for a greeting.');
  expect(fx.git('show', `${sha}:hello.txt`)).toBe('hi\n');
  expect(fx.git('show', `${sha}:README.md`)).toBe('# r\n\nSays hello.\n');
  expect(fx.git('ls-tree', '-r', '--name-only', sha)).not.toContain('.incrementum-');
  await waitFor(() => runningIn(fx.tmp.path).length === 0, `no ${agentName} left`);
}
