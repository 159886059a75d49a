// Auto-commit against the scripted agent in a real git repo: an agent that
// commits its files (its message becomes the draft), and one that does not.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent } from '../../src/agent/acp-session.js';
import { autoCommit } from '../../src/agent/auto-commit.js';
import { scriptedAgentCommand } from '../../src/agent/resolve.js';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const todo = {
  id: 'abc123',
  title: 'Greet people',
  description: '',
  type: 'task',
  priority: 2,
  status: 'in_progress',
} as never;

async function run(scenario: unknown) {
  const t = tempDir('ii-autocommit-');
  cleanups.push(t.cleanup);
  const ws = join(t.path, 'repo');
  mkdirSync(ws);
  gitRepo(ws);
  const scenarioPath = join(t.path, 'scenario.json');
  writeFileSync(scenarioPath, JSON.stringify(scenario));
  const s = await startAgent({
    agent: { name: 'scripted', command: scriptedAgentCommand(), env: { II_SCRIPTED_SCENARIO: scenarioPath } },
    cwd: ws,
    transcriptPath: join(t.path, 'transcript.jsonl'),
    turnTimeoutMs: 30_000,
    stopGrace: { eofMs: 500, termMs: 500 },
  });
  cleanups.push(() => s.close());
  const vcs = new GitVcs();
  const head = await vcs.head(ws);
  await s.prompt('You are working on one todo in a git workspace.');
  const r = await autoCommit(vcs)({ session: s, workspace: ws, todo, files: s.files() });
  return { ws, vcs, head, r };
}

describe('auto-commit', () => {
  it('lets the agent commit exactly its files, and keeps its message as the draft', async () => {
    const { ws, vcs, head, r } = await run({
      implement: [
        {
          actions: [
            { type: 'write', path: 'hello.txt', content: 'hi\n' },
            { type: 'edit', path: 'README.md', old: '# test', new: '# greeted' },
          ],
        },
      ],
    });
    expect(r).toBeUndefined();
    const files = await vcs.changedFiles(ws, head, await vcs.head(ws));
    expect(files.map((f) => f.path).sort()).toEqual(['README.md', 'hello.txt']);
    expect(readFileSync(join(ws, '.incrementum-commit-message'), 'utf8')).toBe(
      'chore: work of this iteration\n',
    );
    expect(await vcs.hasChanges(ws)).toBe(false);
  });

  it('warns, without failing, when the agent does not commit', async () => {
    const { ws, vcs, head, r } = await run({
      implement: [{ actions: [{ type: 'write', path: 'hello.txt', content: 'hi\n' }] }],
      'auto-commit': [{ actions: [{ type: 'message', text: 'I would rather not.' }] }],
    });
    expect(r).toEqual({ warning: expect.stringContaining('the agent did not commit') });
    expect(await vcs.head(ws)).toBe(head);
    expect(await vcs.hasChanges(ws)).toBe(true);
  });
});
