import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ii } from '../helpers/cli.js';
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
    writeFileSync(join(repo, 'incrementum.toml'), '[job]\ntest-commands = ["true"]\n');
    const r = ii(['doctor'], { cwd: repo, env });
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
});
