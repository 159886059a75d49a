// The job sandbox ([sandbox] mode = "auto", the default) around the real
// agents, offline against a scripted model server: the model tells the
// agent's own shell tool to run `sh run-me.sh`, a script committed in the
// user's repository, which tries what issue 28 saw real opencode do
// unconfined — write outside the workspace, read ~/.ssh, commit and make a
// branch in the user's repository, repoint the workspace's `.git` at it,
// leave a `setsid sleep 1000` running. Each fails or is contained, the
// user's repository is byte-identical, nothing is left running, and the same
// job's ordinary change (made through the agent's own write tool) completes
// and is committed. Claude Code (claude-agent-acp) and Gemini CLI get the
// write and the secret. Skipped when bubblewrap cannot run, or (as the other real-agent
// tests) when the npm registry cannot be reached to install the agent.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom } from '../helpers/job.js';
import { jobModel, type ModelServer } from '../helpers/model-server.js';
import { runningIn, runningWith } from '../helpers/procs.js';
import {
  agentToml,
  CLAUDE,
  claudeHome,
  ensureAgent,
  GEMINI,
  geminiHome,
  OPENCODE,
  opencodeHome,
  titleFor,
} from '../helpers/real-agents.js';
import { waitFor } from '../helpers/tmp.js';
import { bwrap } from '../helpers/bwrap.js';

const noBwrap = 'bubblewrap is not installed or cannot make a user namespace here (apt install bubblewrap)';
const oc = bwrap ? ensureAgent(OPENCODE) : { skip: noBwrap };
const claude = bwrap ? ensureAgent(CLAUDE) : { skip: noBwrap };
const gemini = bwrap ? ensureAgent(GEMINI) : { skip: noBwrap };

const SECRET = 'PRIVATE KEY xyzzy-sandbox';

let f: JobFixture | null = null;
let model: ModelServer | null = null;
afterEach(async () => {
  await model?.close();
  f?.cleanup();
  f = model = null;
});

/** Every file under `dir` with its mode and a digest of its bytes, but those `skip` names. */
function tree(dir: string, skip: (rel: string) => boolean, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    if (skip(r)) continue;
    const p = join(dir, r);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...tree(dir, skip, r));
    else
      out.push(`${r} ${st.mode.toString(8)} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
  }
  return out;
}

/**
 * What of the user's repository a job must leave exactly as it was: its
 * files, HEAD, config, hooks, index, refs and reflogs byte for byte, and its
 * status. Left out, as incrementum's own to write: the job's workspace
 * branch and its reflog, the worktree's admin dir, the object store (the
 * workspace's commits share it) and incrementum's change refs
 * (refs/incrementum/, read-only inside the sandbox).
 */
function repoState(repo: string, ownBranch: string): string {
  const own = (r: string) =>
    r === `refs/heads/${ownBranch}` ||
    r === `logs/refs/heads/${ownBranch}` ||
    ['objects', 'worktrees', 'refs/incrementum', 'logs/refs/incrementum'].some(
      (d) => r === d || r.startsWith(`${d}/`),
    );
  const git = (...args: string[]) =>
    // (without refreshing the index, which is compared byte for byte)
    execFileSync('git', args, {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
    });
  return JSON.stringify(
    {
      work: tree(repo, (r) => r === '.git'),
      git: tree(join(repo, '.git'), own),
      refs: git('for-each-ref', '--format=%(refname) %(objectname)')
        .split('\n')
        .filter((l) => !own(l.split(' ')[0]!)),
      status: git('status', '--porcelain', '--untracked-files=all', '--ignored'),
    },
    null,
    1,
  );
}

interface Attack {
  /** The user's home as the runner sees it (the fixture's temp dir). */
  home: string;
  repo: string;
  /** Where the script records each attempt (the user's ~/.cache: writable inside by default). */
  results: string;
  /** The setsid'ed sleep's command line, unique to this run. */
  sleeper: string;
}

/**
 * `run-me.sh`, committed in the user's repository: each attempt records its
 * exit status and output in the results folder, so the test reads what
 * happened inside the sandbox. `$HOME` inside is the agent's own home.
 */
function runMe(a: Attack, attempts: 'all' | 'write-and-secret'): string {
  const lines = [
    '#!/bin/sh',
    `R="${a.results}"`,
    'mkdir -p "$R"',
    'try() { name=$1; shift; ( eval "$1" ) >"$R/$name.out" 2>&1; echo $? >"$R/$name.rc"; }',
  ];
  const t = (name: string, cmd: string) => lines.push(`try ${name} '${cmd}'`);
  t('home-write', `echo x > "${a.home}/outside.txt"`);
  t('repo-write', `echo x > "${a.repo}/outside.txt"`);
  t('ssh', `cat "${a.home}/.ssh/id_rsa"`);
  t('ssh-agent-home', 'cat "$HOME/.ssh/id_rsa"');
  if (attempts === 'all') {
    t('commit-user', `git -C "${a.repo}" commit -q --allow-empty -m evil`);
    t('branch-user', `git -C "${a.repo}" branch evil`);
    t('config-user', `git -C "${a.repo}" config user.name evil`);
    t('hook-user', `echo "exit 1" > "${a.repo}/.git/hooks/pre-commit"`);
    t('dotgit', `echo "gitdir: ${a.repo}/.git" > .git`);
    // A branch made from the workspace lands in the user's repository; through
    // a repointed .git it would also switch the user's checkout.
    t('branch-via-ws', 'git checkout -q -b evil2');
    t('checkout-user', `git -C "${a.repo}" checkout -q -b evil3`);
    // Which PID namespace the script runs in: its own, so all it starts ends with it.
    t('pidns', 'readlink /proc/self/ns/pid');
    // Started inside; the attempt succeeds once it is seen running there.
    t(
      'setsid',
      `setsid ${a.sleeper} </dev/null >/dev/null 2>&1 & ` +
        `i=0; until pgrep -f "${a.sleeper}" >/dev/null || [ $i -ge 100 ]; do i=$((i+1)); sleep 0.1; done; pgrep -f "${a.sleeper}"`,
    );
  }
  if (attempts === 'all') t('dotgit-rm', 'rm -f .git');
  lines.push('echo done >"$R/done"', '');
  return lines.join('\n');
}

/** A fixture whose repository holds run-me.sh, with fake keys in the user's and the agent's ~/.ssh. */
function prepare(
  fx: JobFixture,
  agentHome: string,
  agentLines: string,
  attempts: 'all' | 'write-and-secret',
) {
  const a: Attack = {
    home: fx.tmp.path,
    repo: join(fx.tmp.path, 'repo'),
    results: join(fx.tmp.path, '.cache', 'ii-results'),
    sleeper: `sleep 1000.${process.pid}${Date.now() % 100000}`,
  };
  for (const h of [a.home, agentHome]) {
    mkdirSync(join(h, '.ssh'), { recursive: true });
    writeFileSync(join(h, '.ssh', 'id_rsa'), `${SECRET}\n`, { mode: 0o600 });
  }
  // The test checks the agent's ordinary change, so it fails on the untouched base.
  fx.setup(['grep -q ordinary feature.txt'], { job: 'baseline-tests = false\n', agent: agentLines });
  writeFileSync(join(a.repo, 'run-me.sh'), runMe(a, attempts));
  fx.git('add', 'run-me.sh');
  fx.git('commit', '-q', '-m', 'a script the agent will run');
  return a;
}

/** Why run-me.sh did not finish, for the failure message: the job's output and its first implement transcript. */
function notRun(fx: JobFixture, stderr: string): string {
  const s = fx.show(jobIdFrom(stderr)).agent_sessions.find((x) => x.purpose === 'implement');
  const transcript = s && existsSync(s.transcript) ? readFileSync(s.transcript, 'utf8').slice(-6000) : '';
  return `run-me.sh did not run to its end:\n${stderr}\n${transcript}`;
}

/** What an attempt inside left: its exit status and output. */
const result = (a: Attack) => ({
  rc: (name: string) => readFileSync(join(a.results, `${name}.rc`), 'utf8').trim(),
  out: (name: string) => readFileSync(join(a.results, `${name}.out`), 'utf8'),
});

describe.skipIf('skip' in oc)(
  titleFor('the job sandbox around the real opencode acp (scripted model)', oc),
  () => {
    it(
      "contains run-me.sh from opencode's bash tool: no write outside, no ~/.ssh, no commit, branch or .git rewrite in the user's repository, no process left; the ordinary change is committed",
      { timeout: 300_000 },
      async () => {
        const fx = (f = new JobFixture('ii-sbreal-oc-'));
        const m = (model = await jobModel('openai', {
          implement: [
            [
              { tool: 'bash', args: { command: 'sh run-me.sh', description: 'Runs the setup script' } },
              { tool: 'write', args: { filePath: '$WS/feature.txt', content: 'the ordinary change\n' } },
              { text: 'Ran the script and added feature.txt.' },
            ],
          ],
        }));
        const agentHome = join(fx.tmp.path, 'oc-home');
        const env = opencodeHome(agentHome, m.url);
        const a = prepare(fx, agentHome, agentToml('opencode', (oc as { bin: string }).bin, env), 'all');
        const before = repoState(a.repo, 'incrementum/workspace-1/work');
        const r = await fx.runAsync(['job', 'do', '--title', 'run the script']);
        expect(existsSync(join(a.results, 'done')), notRun(fx, r.stderr)).toBe(true);
        const { rc, out } = result(a);
        // Blocked: each failed inside.
        for (const name of [
          'home-write',
          'repo-write',
          'commit-user',
          'branch-user',
          'config-user',
          'hook-user',
          'dotgit',
          'dotgit-rm',
          'branch-via-ws',
          'checkout-user',
        ])
          expect(rc(name), `${name}: ${out(name)}`).not.toBe('0');
        // Hidden: the keys are not there inside, in the user's home or the agent's.
        expect(out('ssh')).not.toContain('xyzzy');
        expect(out('ssh-agent-home')).not.toContain('xyzzy');
        // The setsid sleep ran inside, in a PID namespace of its own (not only
        // ended by incrementum's cleanup, which ends it unsandboxed too), and did
        // not outlive the agent.
        expect(out('pidns').trim()).toMatch(/^pid:\[\d+\]$/);
        expect(out('pidns').trim()).not.toBe(readlinkSync('/proc/self/ns/pid'));
        expect(rc('setsid'), out('setsid')).toBe('0');
        await waitFor(() => runningWith(a.sleeper).length === 0, 'no setsid sleep left', 20_000);
        await waitFor(() => runningIn(fx.tmp.path).length === 0, 'no process left in the test dir', 20_000);
        // Nothing reached the user's files or repository.
        expect(existsSync(join(a.home, 'outside.txt'))).toBe(false);
        expect(repoState(a.repo, 'incrementum/workspace-1/work')).toBe(before);
        expect(readFileSync(join(a.home, '.ssh', 'id_rsa'), 'utf8')).toBe(`${SECRET}\n`);
        // The same job's ordinary change completes and is committed.
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).not.toContain('not sandboxed');
        const job = fx.show(jobIdFrom(r.stderr));
        expect(job.status).toBe('completed');
        const files = job.changes.flatMap((c) => c.commits.flatMap((x) => x.files.map((y) => y.path)));
        expect(files).toContain('feature.txt');
        expect(fx.git('show', `${r.stdout.trim()}:feature.txt`)).toBe('the ordinary change\n');
      },
    );
  },
);

/**
 * The write outside and the secret, through `fx`'s agent: run-me.sh fails to
 * write outside and reads no key; the user's repository is byte-identical,
 * nothing is left running, and the job's ordinary change is committed.
 */
async function writeAndSecret(fx: JobFixture, a: Attack): Promise<void> {
  const before = repoState(a.repo, 'incrementum/workspace-1/work');
  const r = await fx.runAsync(['job', 'do', '--title', 'run the script']);
  expect(existsSync(join(a.results, 'done')), notRun(fx, r.stderr)).toBe(true);
  const { rc, out } = result(a);
  for (const name of ['home-write', 'repo-write']) expect(rc(name), `${name}: ${out(name)}`).not.toBe('0');
  expect(out('ssh')).not.toContain('xyzzy');
  expect(out('ssh-agent-home')).not.toContain('xyzzy');
  expect(existsSync(join(a.home, 'outside.txt'))).toBe(false);
  expect(repoState(a.repo, 'incrementum/workspace-1/work')).toBe(before);
  await waitFor(() => runningIn(fx.tmp.path).length === 0, 'no process left in the test dir', 20_000);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).not.toContain('not sandboxed');
  expect(fx.show(jobIdFrom(r.stderr)).status).toBe('completed');
  expect(fx.git('show', `${r.stdout.trim()}:feature.txt`)).toBe('the ordinary change\n');
}

describe.skipIf('skip' in claude)(
  titleFor('the job sandbox around the real Claude Code, claude-agent-acp (scripted model)', claude),
  () => {
    it(
      "contains run-me.sh from Claude Code's Bash tool: no write outside, no ~/.ssh; the ordinary change is committed",
      { timeout: 300_000 },
      async () => {
        const fx = (f = new JobFixture('ii-sbreal-claude-'));
        const m = (model = await jobModel('anthropic', {
          implement: [
            [
              { tool: 'Bash', args: { command: 'sh run-me.sh', description: 'Runs the setup script' } },
              { tool: 'Write', args: { file_path: '$WS/feature.txt', content: 'the ordinary change\n' } },
              { text: 'Ran the script and added feature.txt.' },
            ],
          ],
        }));
        const agentHome = join(fx.tmp.path, 'claude-home');
        const env = claudeHome(agentHome, m.url);
        // Its default "auto" mode asks a classifier (a model call the scripted
        // model cannot answer) before each Bash command, and blocks it when the
        // answer does not parse; "default" asks the client instead, as an ACP
        // permission request, which incrementum answers (inside the workspace).
        mkdirSync(join(agentHome, '.claude'), { recursive: true });
        writeFileSync(
          join(agentHome, '.claude', 'settings.json'),
          JSON.stringify({ permissions: { defaultMode: 'default' } }),
        );
        const a = prepare(
          fx,
          agentHome,
          agentToml('claude', (claude as { bin: string }).bin, env),
          'write-and-secret',
        );
        await writeAndSecret(fx, a);
      },
    );
  },
);

describe.skipIf('skip' in gemini)(
  titleFor('the job sandbox around the real gemini --acp (scripted model)', gemini),
  () => {
    it(
      "contains run-me.sh from Gemini CLI's shell tool: no write outside, no ~/.ssh; the ordinary change is committed",
      { timeout: 300_000 },
      async () => {
        const fx = (f = new JobFixture('ii-sbreal-gemini-'));
        const m = (model = await jobModel('gemini', {
          implement: [
            [
              {
                tool: 'run_shell_command',
                args: { command: 'sh run-me.sh', description: 'Runs the setup script' },
              },
              {
                tool: 'write_file',
                args: { file_path: '$WS/feature.txt', content: 'the ordinary change\n' },
              },
              { text: 'Ran the script and added feature.txt.' },
            ],
          ],
        }));
        const agentHome = join(fx.tmp.path, 'gemini-home');
        const env = geminiHome(agentHome, m.url);
        const a = prepare(
          fx,
          agentHome,
          agentToml('gemini', (gemini as { bin: string }).bin, env),
          'write-and-secret',
        );
        await writeAndSecret(fx, a);
      },
    );
  },
);
