// An agent that repoints its workspace's `.git` at the user's repository
// (`gitdir: <repo>/.git`): through ACP fs/write_text_file the write is
// refused; through its own tools (a shell) the next git command incrementum
// would run there is refused instead and the job fails saying why. Either way
// the user's main, checked-out branch and staged files stay as they were.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, write } from '../helpers/job.js';
import { runningIn } from '../helpers/procs.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-redirect-');
});
afterEach(() => f.cleanup());

/** The user's repository as they would check it: main, HEAD, the index, the reflog of main. */
function userState() {
  return {
    main: f.git('rev-parse', 'refs/heads/main'),
    head: f.git('symbolic-ref', 'HEAD'),
    index: f.git('ls-files', '--stage'),
    staged: f.git('diff', '--cached', '--name-only'),
    reflog: f.git('reflog', 'show', '--format=%gs', 'refs/heads/main'),
  };
}

/**
 * Unsandboxed ([sandbox] mode = "off"): these test the line behind the
 * sandbox, for jobs that run without one; inside it the workspace's .git
 * is read-only (test/e2e/sandbox.test.ts).
 */
const UNSANDBOXED = { job: '\n[sandbox]\nmode = "off"\n' };

/** A repository whose user has a file staged and not yet committed. */
function setupWithStaged() {
  f.setup(undefined, UNSANDBOXED);
  writeFileSync(join(f.repo, 'staged.txt'), 'mine, staged\n');
  f.git('add', 'staged.txt');
  return userState();
}

const redirect = () => `gitdir: ${f.repo}/.git\n`;

describe('an agent repointing its workspace at the user repository', () => {
  it('through ACP fs/write_text_file: refused, the agent told why, the repository untouched', () => {
    const before = setupWithStaged();
    const s = f.scenario('acp-redirect', {
      implement: [
        {
          actions: [
            { type: 'write', path: '.git', content: redirect(), style: 'fs' },
            { type: 'write', path: './sub/../.git', content: redirect(), style: 'fs' },
            { type: 'read', path: '.git' },
            write('a.txt', 'a\n'),
          ],
        },
      ],
    });
    const r = f.run(['job', 'do', '--title', 'redirect by acp'], s);
    expect(userState()).toEqual(before);
    expect(f.git('status', '--porcelain')).toBe('A  staged.txt\n');
    const job = f.show(jobIdFrom(r.stderr));
    // The refusal is what the agent was told, recorded in its transcript.
    const transcript = readFileSync(job.agent_sessions[0]!.transcript, 'utf8');
    expect(transcript).toMatch(/refused the agent access to \S*\/1\/\.git: .*link to its git repository/);
    expect(transcript).toMatch(/refused the agent access to \S*sub\/\.\.\/\.git: /);
    // Nothing was redirected, so the job itself goes on and completes on its own branch.
    expect(job.status).toBe('completed');
    expect(job.changes[0]!.commits[0]!.files.map((x) => x.path)).toEqual(['a.txt']);
  });

  it("through the agent's own shell: no git runs there, the job fails saying what happened", () => {
    const before = setupWithStaged();
    const s = f.scenario('shell-redirect', {
      implement: [
        {
          actions: [
            write('a.txt', 'a\n'),
            { type: 'shell', command: `printf 'gitdir: %s/.git\\n' '${f.repo}' > .git` },
          ],
        },
      ],
    });
    const r = f.run(['job', 'do', '--title', 'redirect by shell'], s);
    expect(r.code).not.toBe(0);
    expect(userState()).toEqual(before);
    expect(f.git('status', '--porcelain')).toBe('A  staged.txt\n');
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(
      /\.git \(\S*\/1\/\.git\) no longer points at its own worktree git dir/,
    );
    expect(job.failure_reason).toContain(`gitdir: ${f.repo}/.git`);
    expect(job.failure_reason).toMatch(/no git command was run there/);
    // The next job gets the same workspace made afresh, and works in it.
    const next = f.run(
      ['job', 'do', '--title', 'next one'],
      f.scenario('next', { implement: [{ actions: [write('b.txt', 'b\n')] }] }),
    );
    expect(next.code).toBe(0);
    const done = f.show(jobIdFrom(next.stderr));
    expect(done.status).toBe('completed');
    expect(done.workspace_path).toBe(job.workspace_path);
    expect(done.changes[0]!.commits[0]!.files.map((x) => x.path)).toEqual(['b.txt']);
    expect(readFileSync(join(done.workspace_path!, '.git'), 'utf8')).toMatch(
      /^gitdir: \S*\/\.git\/worktrees\/1\n$/,
    );
    expect(userState()).toEqual(before);
  });

  it('through a test command: the final describe (commit --amend) never runs in the user repository', () => {
    f.setup(
      [
        'test -f README.md',
        `if [ -f a.txt ]; then printf 'gitdir: %s/.git\\n' '${f.tmp.path}/repo' > .git; fi`,
      ],
      UNSANDBOXED,
    );
    writeFileSync(join(f.repo, 'staged.txt'), 'mine, staged\n');
    f.git('add', 'staged.txt');
    const before = userState();
    const r = f.run(
      ['job', 'do', '--title', 'redirect by a test'],
      f.scenario('test-redirect', { implement: [{ actions: [write('a.txt', 'a\n')] }] }),
    );
    expect(r.code).not.toBe(0);
    expect(userState()).toEqual(before);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.stage).toBe('committing');
    expect(job.failure_reason).toMatch(/no longer points at its own worktree git dir/);
  });
});

describe("an agent replacing its worktree's HEAD with a FIFO", () => {
  it('no git runs there (it would hang on it): the job fails saying so, nothing left running', () => {
    const before = setupWithStaged();
    const s = f.scenario('fifo-head', {
      implement: [
        {
          actions: [
            write('a.txt', 'a\n'),
            { type: 'shell', command: `g=$(sed 's/^gitdir: //' .git); rm -f "$g/HEAD"; mkfifo "$g/HEAD"` },
          ],
        },
      ],
    });
    // Bounded: ii() gives up after 60 s, so a hang fails the test rather than stalling it.
    const r = f.run(['job', 'do', '--title', 'fifo head'], s);
    expect(r.code).not.toBe(0);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(/worktrees\/1\/HEAD is no longer a regular file \(it is now a FIFO/);
    expect(job.failure_reason).toMatch(/no git command was run there/);
    expect(userState()).toEqual(before);
    expect(runningIn(f.tmp.path)).toEqual([]);
  });
});
