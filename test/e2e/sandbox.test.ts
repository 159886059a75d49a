// The job's sandbox with the real bubblewrap: the scripted agent's shell
// steps run through the sandboxed agent process itself, as a real agent's
// bash tool would, and try what an agent should not do (write outside, read
// ~/.ssh, make a branch in the user's repository, repoint the workspace's
// .git, leave a setsid process); each fails or is contained, the user's
// repository is byte-identical, nothing is left running, and the same job's
// ordinary change completes and is committed by the agent itself.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, verdict } from '../helpers/job.js';
import { runningIn, runningWith } from '../helpers/procs.js';
import { waitFor } from '../helpers/tmp.js';
import { bwrap, noBwrapWhy as why } from '../helpers/bwrap.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-sandbox-');
});
afterEach(() => f.cleanup());

/** What of the user's repository a job must leave exactly as it was. */
function repoState(repo: string): string {
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' });
  const gitDir = join(repo, '.git');
  return JSON.stringify({
    // (the job's own workspace branch is incrementum's to move)
    refs: git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags')
      .split('\n')
      .filter((l) => !l.startsWith('refs/heads/incrementum/workspace-1/work ')),
    head: readFileSync(join(gitDir, 'HEAD'), 'utf8'),
    config: readFileSync(join(gitDir, 'config'), 'utf8'),
    hooks: readdirSync(join(gitDir, 'hooks')).sort(),
    status: git('status', '--porcelain', '--untracked-files=all'),
    files: readdirSync(repo).sort(),
  });
}

/** A scenario in a folder of its own (the scripted agent's state dir, writable inside), with a results folder. */
function agentDir(): { dir: string; results: string } {
  const dir = join(f.tmp.path, 'agent');
  const results = join(dir, 'results');
  mkdirSync(results, { recursive: true });
  return { dir, results };
}

describe.skipIf(!bwrap)(`the job sandbox (bubblewrap)${bwrap ? '' : ` — skipped: ${why}`}`, () => {
  it("contains an agent's shell: no write outside, no ~/.ssh, no branch or .git rewrite, no process left; its own commit lands", async () => {
    const repo = f.setup();
    const home = f.tmp.path;
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY xyzzy\n');
    const { dir, results: R } = agentDir();
    f.env.SANDBOX_TEST_TOKEN = 'secret';
    // Another workspace's branch, and one an earlier version named.
    f.git('branch', 'incrementum/workspace-9/work');
    f.git('branch', 'incrementum/ws-9');
    const before = repoState(repo);
    const tag = `${process.pid}${Date.now() % 100000}`;
    const sleeper = `sleep 1${tag}`;
    // Each attempt records its exit status (or what it read) in the results folder.
    const attempt = (name: string, cmd: string) => ({
      type: 'shell',
      command: `(${cmd}) >"${R}/${name}.out" 2>&1; echo $? >"${R}/${name}.rc"`,
    });
    const scenario = join(dir, 'scenario.json');
    writeFileSync(
      scenario,
      JSON.stringify({
        implement: [
          {
            actions: [
              attempt('home-write', `echo x > "${home}/outside.txt"`),
              attempt('repo-write', `echo x > "${repo}/outside.txt"`),
              attempt('ssh', `cat "${home}/.ssh/id_rsa"`),
              attempt('ls-state', `ls -A "${join(home, 'state', 'incrementum')}"`),
              attempt('state-write', `echo forged > "${join(home, 'state', 'incrementum', 'state.db')}"`),
              attempt('branch-user', `git -C "${repo}" branch evil`),
              attempt('branch-ws', 'git branch evil2'),
              attempt('config', 'git config user.name evil'),
              attempt(
                'sibling',
                'git update-ref refs/heads/incrementum/workspace-9/work "$(git commit-tree -m x HEAD^{tree})"',
              ),
              attempt('sibling-delete', 'git update-ref -d refs/heads/incrementum/workspace-9/work'),
              attempt(
                'legacy',
                'git update-ref refs/heads/incrementum/ws-9 "$(git commit-tree -m x HEAD^{tree})"',
              ),
              attempt('new-in-incrementum', 'git branch incrementum/evil4'),
              attempt('new-in-other', 'git branch incrementum/workspace-9/evil5'),
              attempt('hook', `echo 'exit 1' > "${repo}/.git/hooks/pre-commit"`),
              attempt('dotgit', `echo "gitdir: ${repo}/.git" > .git`),
              attempt('checkout-user', `git -C "${repo}" checkout -q -b evil3`),
              attempt('token', 'printenv SANDBOX_TEST_TOKEN'),
              attempt(
                'setsid',
                `setsid ${sleeper} </dev/null >/dev/null 2>&1 & sleep 0.2; pgrep -f "${sleeper}"`,
              ),
              { type: 'write', path: 'feature.txt', content: 'the ordinary change\n' },
              attempt('commit', 'git add feature.txt && git commit -q -m "feat: add feature"'),
            ],
          },
        ],
        review: [verdict('ACCEPT', 'fine')],
      }),
    );
    const r = await f.runAsync(['job', 'do', '--title', 'sandboxed'], scenario);
    const rc = (name: string) => readFileSync(join(R, `${name}.rc`), 'utf8').trim();
    const out = (name: string) => readFileSync(join(R, `${name}.out`), 'utf8');
    // Blocked: each failed inside.
    for (const name of [
      'home-write',
      'repo-write',
      'sibling',
      'sibling-delete',
      'legacy',
      'new-in-incrementum',
      'new-in-other',
      'branch-user',
      'branch-ws',
      'config',
      'hook',
      'dotgit',
      'checkout-user',
    ])
      expect(rc(name), `${name}: ${out(name)}`).not.toBe('0');
    // Hidden: ~/.ssh and incrementum's state are there but empty.
    expect(out('ssh')).not.toContain('xyzzy');
    // (only the mount points down to the workspace are left in it)
    expect(out('ls-state').trim().split('\n')).toEqual(['workspaces']);
    expect(rc('state-write'), out('state-write')).not.toBe('0');
    expect(rc('token')).not.toBe('0');
    // The setsid process ran inside, and did not outlive the agent.
    expect(rc('setsid')).toBe('0');
    await waitFor(() => runningWith(sleeper).length === 0, 'no sandboxed process left', 10_000);
    // Nothing reached the user's files.
    expect(existsSync(join(home, 'outside.txt'))).toBe(false);
    expect(repoState(repo)).toBe(before);
    // The same job's ordinary change completes, committed by the agent inside the sandbox.
    expect(rc('commit'), out('commit')).toBe('0');
    expect(r.code, r.stderr).toBe(0);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('completed');
    expect(job.changes[0]!.commits.flatMap((c) => c.files.map((x) => x.path))).toContain('feature.txt');
    expect(r.stderr).not.toContain('not sandboxed');
  }, 120_000);

  it('a runner killed with SIGKILL takes its sandboxed agent and all it started with it', async () => {
    f.setup();
    const { dir } = agentDir();
    const sleeper = `sleep 2${process.pid}${Date.now() % 100000}`;
    const scenario = join(dir, 'stuck.json');
    writeFileSync(
      scenario,
      JSON.stringify({
        implement: [
          {
            actions: [
              { type: 'stubborn' },
              { type: 'shell', command: `setsid ${sleeper} </dev/null >/dev/null 2>&1 &` },
              { type: 'hang' },
            ],
          },
        ],
      }),
    );
    const job = f.spawn(['job', 'do', '--title', 'runner dies'], scenario);
    await waitFor(() => runningWith(sleeper).length > 0, 'the agent to start its setsid sleep', 60_000);
    job.child.kill('SIGKILL');
    await job.exit;
    // No cleanup ran (the runner was killed): the sandbox died with it.
    await waitFor(() => runningWith(sleeper).length === 0, 'the setsid sleep to end', 10_000);
    const ws = f.show(jobIdFrom(job.stderr())).workspace_path!;
    await waitFor(() => runningIn(ws).length === 0, 'nothing left working in the workspace', 10_000);
  }, 120_000);

  it('network "none": a test command cannot reach a port on the host; with "host" (the default) it can', async () => {
    const server = createServer((c) => c.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const reach =
        `${process.execPath} -e "require('net').connect(${port}, '127.0.0.1')` +
        `.on('connect', () => process.exit(0)).on('error', () => process.exit(3))"`;
      f.setup([reach]);
      const host = await f.runAsync(['job', 'do', '--title', 'host']);
      expect(host.code, host.stderr).toBe(0);
      const g = new JobFixture('ii-sandbox-net-');
      try {
        g.setup([reach], { job: '\n[sandbox]\nnetwork = "none"\n' });
        const none = await g.runAsync(['job', 'do', '--title', 'none']);
        expect(none.code).not.toBe(0);
        expect(g.show(jobIdFrom(none.stderr)).failure_reason).toMatch(/fail/);
        expect(none.stderr).toMatch(/exited 3/);
      } finally {
        g.cleanup();
      }
    } finally {
      server.close();
    }
  }, 120_000);

  it('runs the test commands inside: one that writes outside the workspace fails', async () => {
    f.setup([`touch "${f.tmp.path}/from-test"`]);
    const r = await f.runAsync(['job', 'do', '--title', 'x']);
    expect(r.code).not.toBe(0);
    expect(existsSync(join(f.tmp.path, 'from-test'))).toBe(false);
    const job = f.show(jobIdFrom(r.stderr));
    expect(job.status).toBe('failed');
    expect(job.failure_reason).toMatch(/fail/);
    // It says the sandbox was why, naming the path and both ways out.
    expect(job.failure_reason).toContain(`It tried to write outside the workspace (${f.tmp.path}/from-test)`);
    expect(job.failure_reason).toContain('[sandbox] mode = "off"');
    const doctor = f.run(['doctor', '--tests', '--json']);
    const tests = (JSON.parse(doctor.stdout) as { name: string; ok: boolean; fix?: string }[]).find(
      (c) => c.name === 'tests',
    );
    expect(tests).toMatchObject({ ok: false });
    expect(tests!.fix).toContain(`(${f.tmp.path}/from-test)`);
  }, 60_000);
});

describe('without bubblewrap', () => {
  /** A PATH with git and node but no bwrap. */
  function pathWithoutBwrap(): string {
    const bin = join(f.tmp.path, 'bin');
    mkdirSync(bin, { recursive: true });
    for (const tool of ['git', 'node']) {
      const where = execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
      symlinkSync(where, join(bin, tool));
    }
    return bin;
  }

  it('auto warns once and runs the job unsandboxed', async () => {
    f.setup();
    f.env.PATH = pathWithoutBwrap();
    const r = await f.runAsync(['job', 'do', '--title', 'x']);
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('agents not sandboxed'));
    expect(warnings).toEqual([
      'warning: agents not sandboxed: bubblewrap not installed — apt install bubblewrap',
    ]);
  }, 60_000);

  it('required refuses with the fix, before any todo or job is made', () => {
    f.setup(undefined, { job: '\n[sandbox]\nmode = "required"\n' });
    f.env.PATH = pathWithoutBwrap();
    const r = f.run(['job', 'do', '--title', 'x']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('[sandbox] mode = "required" but bubblewrap not installed');
    expect(r.stderr).toContain('apt install bubblewrap');
    expect(f.todos('open')).toEqual([]);
  });

  it('ii doctor says so: a finding with auto, a failure with required', () => {
    f.setup();
    f.env.PATH = pathWithoutBwrap();
    const auto = f.run(['doctor', '--json']);
    const find = (out: string) =>
      (JSON.parse(out) as { name: string; ok: boolean; detail: string; fix?: string }[]).find(
        (c) => c.name === 'sandbox',
      );
    expect(find(auto.stdout)).toEqual({
      name: 'sandbox',
      ok: true,
      detail: 'agents not sandboxed: bubblewrap not installed — apt install bubblewrap',
    });
    writeFileSync(
      join(f.repo, 'incrementum.toml'),
      readFileSync(join(f.repo, 'incrementum.toml'), 'utf8') + '\n[sandbox]\nmode = "required"\n',
    );
    const required = f.run(['doctor', '--json']);
    expect(find(required.stdout)).toMatchObject({ ok: false, fix: 'apt install bubblewrap' });
  });
});
