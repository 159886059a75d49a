import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ii } from '../helpers/cli.js';
import { runningWith } from '../helpers/procs.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  tmp = tempDir();
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: join(tmp.path, 'home') };
});
afterEach(() => tmp.cleanup());

describe('ii doctor', () => {
  it('passes on a healthy setup and exits 0', () => {
    writeFileSync(
      join(repo, 'incrementum.toml'),
      '[agent]\npreset = "scripted"\n[job]\ntest-commands = ["true"]\n',
    );
    const r = ii(['doctor'], { cwd: repo, env });
    expect(r.stdout).toMatch(/ok\s+agent\s+scripted/);
    expect(r.stdout).toMatch(/ok\s+acp\s+handshake ok/);
    expect(r.stdout).toMatch(/ok\s+node\s+v2\d/);
    expect(r.stdout).toMatch(/ok\s+git\s+git version/);
    expect(r.stdout).toMatch(/ok\s+state\s+.*database ok/);
    expect(r.stdout).toMatch(/Everything looks right/);
    expect(r.code).toBe(0);
    // The scripted agent with nothing to play is said to change nothing…
    expect(r.stdout).toContain('no scenario (II_SCRIPTED_SCENARIO): every implement turn changes nothing');
    // …and not once it has a scenario.
    writeFileSync(
      join(repo, 'incrementum.toml'),
      '[agent]\npreset = "scripted"\nenv = { II_SCRIPTED_SCENARIO = "s.json" }\n[job]\ntest-commands = ["true"]\n',
    );
    expect(ii(['doctor'], { cwd: repo, env }).stdout).not.toContain('no scenario');
  });

  it('says what to fix for a corrupt database, leaving it untouched, and exits 1', () => {
    const db = join(tmp.path, 'state', 'incrementum', 'state.db');
    mkdirSync(dirname(db), { recursive: true });
    writeFileSync(db, 'not a database at all');
    const r = ii(['doctor', '--json'], { cwd: repo, env });
    expect(r.code).toBe(1);
    const state = (JSON.parse(r.stdout) as { name: string; ok: boolean; fix?: string }[]).find(
      (c) => c.name === 'state',
    );
    expect(state).toMatchObject({ ok: false });
    expect(state?.fix).toMatch(/left untouched/);
  });

  it('names an invalid config key and a missing test command', () => {
    writeFileSync(join(repo, 'incrementum.toml'), '[job]\nmax-changes = -1\n');
    expect(ii(['doctor'], { cwd: repo, env }).stdout).toMatch(
      /FAIL config.*invalid config[\s\S]*job\.max-changes/,
    );
    writeFileSync(join(repo, 'incrementum.toml'), '');
    expect(ii(['doctor'], { cwd: repo, env }).stdout).toMatch(
      /FAIL config\s+no \[job\] test-commands[\s\S]*ii init/,
    );
  });

  it('reports git missing from PATH', () => {
    const r = ii(['doctor'], { cwd: repo, env: { ...env, PATH: dirname(process.execPath) } });
    expect(r.stdout).toMatch(/FAIL git\s+not found on PATH/);
    expect(r.code).toBe(1);
  });

  it('a missing agent: says how to install one and points at ii demo', () => {
    writeFileSync(
      join(repo, 'incrementum.toml'),
      '[agent]\ncommand = ["ii-no-such-agent", "acp"]\n[job]\ntest-commands = ["true"]\n',
    );
    const r = ii(['doctor'], { cwd: repo, env });
    expect(r.stdout).toMatch(/FAIL agent .*ii-no-such-agent/);
    expect(r.stdout).toMatch(/ii demo/);
    expect(r.code).toBe(1);
    // The default agent (opencode) is checked when none is configured, and --agent overrides.
    const o = ii(['doctor', '--agent', 'scripted'], { cwd: repo, env });
    expect(o.stdout).toMatch(/ok\s+acp\s+handshake ok/);
  });

  it('a broken agent (prints garbage and never answers): the handshake fails with a fix, no process left', () => {
    const fake = join(tmp.path, 'broken-agent.sh');
    writeFileSync(fake, '#!/bin/sh\necho "Welcome to BrokenAgent 1.0"\nexec sleep 300\n', { mode: 0o755 });
    writeFileSync(
      join(repo, 'incrementum.toml'),
      `[agent]\ncommand = [${JSON.stringify(fake)}]\n[job]\ntest-commands = ["true"]\n`,
    );
    const r = ii(['doctor', '--json'], { cwd: repo, env: { ...env, II_DOCTOR_HANDSHAKE_MS: '2000' } });
    const acp = (JSON.parse(r.stdout) as { name: string; ok: boolean; detail: string; fix?: string }[]).find(
      (c) => c.name === 'acp',
    );
    expect(acp?.ok).toBe(false);
    expect(acp?.fix).toMatch(/ACP agent on stdio/);
    expect(r.code).toBe(1);
    expect(runningWith(fake)).toEqual([]);
  });

  it('a bare repository is a finding, not "Everything looks right"', () => {
    const bare = join(tmp.path, 'bare.git');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    const r = ii(['doctor', '--agent', 'scripted'], { cwd: bare, env });
    expect(r.stdout).toMatch(/FAIL repo\s+.*bare\.git is a bare repository/);
    expect(r.stdout).toMatch(/→ Run ii in a clone with a working tree: git clone /);
    expect(r.stdout).not.toMatch(/Everything looks right/);
    expect(r.code).toBe(1);
  });

  it('no git identity: says whose name the commits would carry and how to set one', () => {
    writeFileSync(
      join(repo, 'incrementum.toml'),
      '[agent]\npreset = "scripted"\n[job]\ntest-commands = ["true"]\n',
    );
    execFileSync('git', ['config', '--unset', 'user.name'], { cwd: repo });
    execFileSync('git', ['config', '--unset', 'user.email'], { cwd: repo });
    const r = ii(['doctor'], { cwd: repo, env: { ...env, GIT_CONFIG_NOSYSTEM: '1' } });
    expect(r.stdout).toMatch(/FAIL identity\s+no git identity .*"incrementum <incrementum@localhost>"/);
    expect(r.stdout).toContain('→ git config --global user.name "Your Name"\n');
    expect(r.stdout).toContain('  git config --global user.email "you@example.com"\n');
    expect(r.code).toBe(1);
    // The healthy setup's identity is shown.
    execFileSync('git', ['config', 'user.name', 'Ada'], { cwd: repo });
    execFileSync('git', ['config', 'user.email', 'ada@example.com'], { cwd: repo });
    const ok = ii(['doctor'], { cwd: repo, env: { ...env, GIT_CONFIG_NOSYSTEM: '1' } });
    expect(ok.stdout).toMatch(/ok\s+identity\s+Ada <ada@example\.com>/);
  });

  it('a broken template override and an unknown template variable: each named with file and line', () => {
    writeFileSync(
      join(repo, 'incrementum.toml'),
      '[agent]\npreset = "scripted"\n[job]\ntest-commands = ["true"]\n',
    );
    const dir = join(repo, '.incrementum', 'templates');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'review.liquid'), 'ok\n{% if Feedback %}never closed\n');
    writeFileSync(join(dir, 'implement.liquid'), '# {{ Todo.Title }}\n\n{{ Todo.Titel }}\n');
    const r = ii(['doctor', '--json'], { cwd: repo, env });
    const t = (JSON.parse(r.stdout) as { name: string; ok: boolean; detail: string; fix?: string }[]).find(
      (c) => c.name === 'templates',
    );
    expect(t?.ok).toBe(false);
    expect(t?.detail).toContain(
      `prompt template ${join(dir, 'implement.liquid')}, line 3: unknown variable Todo.Titel`,
    );
    expect(t?.detail).toMatch(/review\.liquid, line 2: parsing failed/);
    expect(t?.detail.split('\n')).toHaveLength(2);
    expect(t?.fix).toMatch(/ii help templates/);
    expect(r.code).toBe(1);
    // A job refuses to start on it, before anything is claimed.
    const job = ii(['job', 'do', '--title', 't'], { cwd: repo, env });
    expect(job.code).toBe(2);
    expect(job.stderr).toContain(`${join(dir, 'implement.liquid')}, line 3: unknown variable Todo.Titel`);
    expect(ii(['job', 'list', '--all', '--json'], { cwd: repo, env }).stdout.trim()).toBe('[]');
  });

  it('a multi-line config error keeps its lines, and a config that cannot be read is one finding', () => {
    writeFileSync(join(repo, 'incrementum.toml'), '[agent\npreset = "scripted"\n');
    const r = ii(['doctor'], { cwd: repo, env });
    // The TOML code frame stays a frame: the line, then the caret under it.
    expect(r.stdout).toMatch(
      /FAIL config\s+config .*incrementum\.toml is not valid TOML[^\n]*\n(\s+.*\n)*\s+1: +\[agent\n\s+\^/,
    );
    // The agent the broken file would have named is unknown: no guess at it.
    expect(r.stdout).not.toMatch(/^(ok {2}|FAIL) (agent|acp)\b/m);
    expect(r.stdout).toMatch(/1 problem to fix/);
    expect(r.code).toBe(1);

    // Unreadable (a folder where the file should be): one finding, with a fix.
    const unreadable = join(tmp.path, 'repo2');
    mkdirSync(unreadable);
    gitRepo(unreadable);
    mkdirSync(join(unreadable, 'incrementum.toml'));
    const u = ii(['doctor', '--json'], { cwd: unreadable, env });
    const failed = (
      JSON.parse(u.stdout) as { name: string; ok: boolean; detail: string; fix?: string }[]
    ).filter((c) => !c.ok);
    expect(failed.map((c) => c.name)).toEqual(['config']);
    expect(failed[0]?.detail).toMatch(/cannot read config .*incrementum\.toml/);
    expect(failed[0]?.fix).toMatch(/readable/);
  });

  it('--tests runs setup and the tests in a scratch workspace and reports what a job would see', () => {
    const base = '[agent]\npreset = "scripted"\n[job]\ntest-commands = ["test -f dep.txt"]\n';
    writeFileSync(join(repo, 'incrementum.toml'), base);
    execFileSync('git', ['add', '-A'], { cwd: repo });
    execFileSync('git', ['commit', '-qm', 'config'], { cwd: repo });
    // No setup: the test needs what an install would make, so a job would stop before its first turn.
    const bare = ii(['doctor', '--tests', '--json'], { cwd: repo, env });
    const checks = JSON.parse(bare.stdout) as { name: string; ok: boolean; detail: string; fix?: string }[];
    expect(checks.find((c) => c.name === 'setup')).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/no \[workspace\] setup/),
    });
    const tests = checks.find((c) => c.name === 'tests');
    expect(tests?.ok).toBe(false);
    expect(tests?.detail).toMatch(/before any change: `test -f dep.txt` exited 1/);
    expect(tests?.fix).toMatch(/before any agent turn.*\[workspace\] setup/);
    expect(bare.code).toBe(1);

    writeFileSync(
      join(repo, 'incrementum.toml'),
      base + '[workspace]\nsetup = ["echo installing; echo dep > dep.txt"]\n',
    );
    // What the setup installs is ignored, as node_modules/ is: else every job would commit it.
    writeFileSync(join(repo, '.gitignore'), 'dep.txt\n');
    execFileSync('git', ['add', '-A'], { cwd: repo });
    execFileSync('git', ['commit', '-qm', 'setup'], { cwd: repo });
    const ok = ii(['doctor', '--tests'], { cwd: repo, env });
    expect(ok.stdout).toMatch(/ok\s+setup\s+ran echo installing; echo dep > dep\.txt \(/);
    expect(ok.stdout).toMatch(/ok\s+tests\s+pass on [0-9a-f]{10}: test -f dep\.txt/);
    expect(ok.stdout).toMatch(/Everything looks right/);
    expect(ok.code).toBe(0);

    writeFileSync(
      join(repo, 'incrementum.toml'),
      base + '[workspace]\nsetup = ["echo E404 no such package >&2; exit 1"]\n',
    );
    execFileSync('git', ['commit', '-qam', 'broken setup'], { cwd: repo });
    const bad = ii(['doctor', '--tests'], { cwd: repo, env });
    expect(bad.stdout).toMatch(/FAIL setup\s+`echo E404.*` exited 1:\n\s+E404 no such package\n/);
    expect(bad.stdout).not.toMatch(/tests\s+pass/);
    // The scratch worktree is gone.
    const worktrees = execFileSync('git', ['worktree', 'list', '--porcelain'], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(worktrees.match(/^worktree /gm)).toHaveLength(1);
  });

  it('--tests runs setup and the tests with the environment as the user has it: no NODE_ENV=production of its own', () => {
    // Under NODE_ENV=production `npm ci` leaves out devDependencies, so a
    // Node project's first job could not run its tests. Each command fails
    // when NODE_ENV is set at all, and the user has not set it.
    const unset = 'test -z "${NODE_ENV+set}" || { echo "NODE_ENV=$NODE_ENV" >&2; exit 1; }';
    writeFileSync(
      join(repo, 'incrementum.toml'),
      `[agent]\npreset = "scripted"\n[job]\ntest-commands = [${JSON.stringify(unset)}]\n[workspace]\nsetup = [${JSON.stringify(unset)}]\n`,
    );
    execFileSync('git', ['add', '-A'], { cwd: repo });
    execFileSync('git', ['commit', '-qm', 'config'], { cwd: repo });
    const r = ii(['doctor', '--tests'], { cwd: repo, env: { ...env, NODE_ENV: undefined } });
    expect(r.stdout).toMatch(/ok\s+setup\s+ran /);
    expect(r.stdout).toMatch(/ok\s+tests\s+pass on/);
    expect(r.code).toBe(0);
    // A NODE_ENV the user set is theirs: it reaches the commands as it is.
    const set = ii(['doctor', '--tests'], { cwd: repo, env: { ...env, NODE_ENV: 'development' } });
    expect(set.stdout).toMatch(/FAIL setup\s+.*exited 1:\n\s+NODE_ENV=development/);
  });
});
