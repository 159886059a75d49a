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
});
