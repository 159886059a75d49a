// The runner's long-lived git processes (src/vcs/git-pipe.ts) never outlive
// the process that started them, however it ends: they read their requests
// from its pipes and exit on end-of-file. A real Node process with the built
// GitVcs opens them, then ends on its own (they do not keep it running) or
// is SIGKILLed (nothing of it runs any cleanup).
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runningWith } from '../helpers/procs.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';

const GIT_JS = join(import.meta.dirname, '..', '..', 'dist', 'src', 'vcs', 'git.js');

let tmp: ReturnType<typeof tempDir>;
let repo: string;
beforeEach(() => {
  tmp = tempDir('ii-gitlife-');
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'README.md': '# r\n' });
});
afterEach(() => tmp.cleanup());

const pipes = () => runningWith(`--git-dir=${realpathSync(repo)}/.git/worktrees/`);

/** A Node process that opens a workspace's long-lived git processes, says `ready`, then `then` ('exit' or 'wait'). */
function opener(then: 'exit' | 'wait') {
  const script = `
    const { GitVcs } = await import(${JSON.stringify(GIT_JS)});
    const vcs = new GitVcs();
    const [repo, ws] = process.argv.slice(1);
    const base = (await vcs.resolveBase(repo)).sha;
    await vcs.addWorkspace(repo, ws, 'incrementum/ws-1', base);
    await vcs.startChange(ws, undefined, base);
    await vcs.head(ws);
    process.stdout.write('ready\\n');
    if (${JSON.stringify(then)} === 'wait') setInterval(() => {}, 1000);
  `;
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', script, repo, join(tmp.path, 'ws', '1')],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const closed = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
  return { child, ready: () => out.includes('ready'), closed };
}

it('a process that ends on its own is not kept running by them, and leaves none', async () => {
  const p = opener('exit');
  expect(await p.closed).toBe(0);
  expect(p.ready()).toBe(true);
  await waitFor(() => pipes().length === 0, 'no long-lived git left');
});

it('a process SIGKILLed leaves none', async () => {
  const p = opener('wait');
  await waitFor(() => p.ready(), 'the opener to be ready');
  expect(pipes().length).toBeGreaterThanOrEqual(2);
  p.child.kill('SIGKILL');
  await p.closed;
  await waitFor(() => pipes().length === 0, 'no long-lived git left');
});
