// ii doctor's remote check: a remote that answers is ok; one that takes the
// connection and never answers is given up on at the timeout, with git and
// whatever git started (its http helper) ended, nothing left running.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { reachRemote } from '../../src/vcs/remote-reach.js';
import { runningIn } from '../helpers/procs.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let server: Server | null = null;
const held: Socket[] = [];
beforeEach(() => {
  tmp = tempDir('ii-reach-');
});
afterEach(async () => {
  for (const s of held.splice(0)) s.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
  tmp.cleanup();
});

const repoWith = (name: string, url: string): string => {
  const dir = join(tmp.path, name);
  mkdirSync(dir);
  gitRepo(dir);
  execFileSync('git', ['remote', 'add', 'origin', url], { cwd: dir });
  return dir;
};

it('a remote that answers: ok', async () => {
  const bare = join(tmp.path, 'origin.git');
  execFileSync('git', ['init', '-q', '--bare', bare]);
  expect(await reachRemote(repoWith('a', bare), 'origin', 30_000)).toEqual({ ok: true });
});

it('a remote that never answers: given up on at the timeout, nothing left running', async () => {
  // Loopback only: takes the connection, says nothing.
  server = createServer((s) => held.push(s));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const repo = repoWith('b', `http://127.0.0.1:${port}/team/app.git`);
  const r = await reachRemote(repo, 'origin', 1500);
  expect(r).toEqual({ ok: false, why: 'no answer within 1.5 s' });
  expect(held.length).toBeGreaterThan(0); // it did connect
  await waitFor(() => runningIn(repo).length === 0, 'git and its helpers to be gone', 10_000);
});
