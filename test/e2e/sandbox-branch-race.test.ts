// Jobs run side by side: while one job's sandbox is being set up, another
// job's landing deletes its workspace's branch, and a new job makes one.
// The sandbox made the other workspaces' branches read-only by mounting each
// over a writable refs folder they shared; a branch deleted between
// bubblewrap's check and its mount failed the sandbox ("Can't bind mount …
// No such file or directory"), and the job with it. Here sandboxed commits
// on the workspace's own branch run in a loop while another process creates
// and deletes the other workspaces' branches as fast as git can: every
// sandbox must start, and every commit land on the workspace's own branch.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Config } from '../../src/model/config.js';
import { jobSandbox } from '../../src/proc/sandbox/sandbox.js';
import { workspaceBranch } from '../../src/session/paths.js';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';
import { GIT_IDENTITY } from '../helpers/env.js';
import { bwrap, noBwrapWhy as why } from '../helpers/bwrap.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('ii-branch-race-');
});
afterEach(() => tmp.cleanup());

/** A repository with workspace 2 on its own branch, and that workspace's sandbox (the scripted agent's policy). */
async function workspaceSandbox() {
  const repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  const stateDir = join(tmp.path, 'state', 'incrementum');
  const ws = join(stateDir, 'workspaces', 'r', '2');
  const base = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
  await new GitVcs().addWorkspace(repo, ws, workspaceBranch(2), base);
  const env = { ...process.env, ...GIT_IDENTITY, HOME: tmp.path };
  const sandbox = jobSandbox({
    config: Config.parse({}),
    repoRoot: repo,
    workspace: ws,
    stateDir,
    agent: { name: 'scripted', command: ['/bin/sh'] },
    env,
  });
  if (!sandbox) throw new Error('no sandbox although bwrap runs here');
  return { repo, ws, base, env, sandbox };
}

/** Runs `command args` to its end: its exit code and what it printed. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const c = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d));
    c.stderr.on('data', (d: Buffer) => (out += d));
    c.on('close', (code) => resolve({ code, out }));
  });
}

describe.skipIf(!bwrap)(
  `sandboxes started while other workspaces' branches come and go${bwrap ? '' : ` — skipped: ${why}`}`,
  () => {
    it('every sandbox starts and commits on its own branch; the others stay out of its reach', async () => {
      const { repo, ws, base, env, sandbox } = await workspaceSandbox();

      // Other workspaces' branches, made and deleted without pause, until told to stop.
      const others = [3, 4, 5, 6, 7, 8].map(workspaceBranch);
      const churn = spawn(
        '/bin/sh',
        [
          '-c',
          `while [ ! -e stop ]; do for b in ${others.join(' ')}; do git -C "${repo}" branch -f "$b" ${base}; done; ` +
            `for b in ${others.join(' ')}; do git -C "${repo}" branch -q -D "$b"; done; done`,
        ],
        { cwd: tmp.path, stdio: 'ignore', env },
      );
      const churned = new Promise((r) => churn.on('close', r));
      const rounds = 80;
      const failures: string[] = [];
      try {
        for (let i = 0; i < rounds; i++) {
          const w = sandbox.wrap('/bin/sh', ['-c', `git commit -q --allow-empty -m "round ${i}"`], env);
          const r = await run(w.command, w.args, w.env, ws);
          if (r.code !== 0) failures.push(`round ${i}: exit ${r.code}: ${r.out.trim()}`);
        }
      } finally {
        execFileSync('touch', [join(tmp.path, 'stop')]);
        await churned;
      }
      expect(failures).toEqual([]);
      const count = execFileSync('git', ['rev-list', '--count', `${base}..${workspaceBranch(2)}`], {
        cwd: repo,
        encoding: 'utf8',
      }).trim();
      expect(Number(count)).toBe(rounds);

      // Another workspace's branch is still out of reach from inside.
      execFileSync('git', ['branch', '-f', others[0]!, base], { cwd: repo });
      const w = sandbox.wrap(
        '/bin/sh',
        ['-c', `git update-ref refs/heads/${others[0]} HEAD && git branch incrementum/evil`],
        env,
      );
      const r = await run(w.command, w.args, w.env, ws);
      expect(r.code, r.out).not.toBe(0);
      expect(execFileSync('git', ['rev-parse', others[0]!], { cwd: repo, encoding: 'utf8' }).trim()).toBe(
        base,
      );
      expect(
        execFileSync('git', ['branch', '--list', 'incrementum/evil'], { cwd: repo, encoding: 'utf8' }),
      ).toBe('');
    }, 180_000);

    it("an agent that points its workspace's HEAD at the user's branch gets no write to it at its next start", async () => {
      const { repo, ws, base, env, sandbox } = await workspaceSandbox();
      execFileSync('git', ['branch', 'feature/x', base], { cwd: repo });
      const inside = async (script: string) => {
        const w = sandbox.wrap('/bin/sh', ['-c', script], env);
        return run(w.command, w.args, w.env, ws);
      };
      // The worktree's HEAD is in its admin dir, which is writable inside.
      const repoint = await inside('git symbolic-ref HEAD refs/heads/feature/x');
      expect(repoint.code, repoint.out).toBe(0);
      const moved = await inside('git commit -q --allow-empty -m evil');
      expect(moved.code, moved.out).not.toBe(0);
      const ref = await inside(
        'git update-ref refs/heads/feature/x "$(git commit-tree -m evil HEAD^{tree})"',
      );
      expect(ref.code, ref.out).not.toBe(0);
      expect(execFileSync('git', ['rev-parse', 'feature/x'], { cwd: repo, encoding: 'utf8' }).trim()).toBe(
        base,
      );
    }, 60_000);
  },
);
