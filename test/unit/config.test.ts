import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configFiles, loadConfig } from '../../src/job/config.js';
import { UserError } from '../../src/errors.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  tmp = tempDir();
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  env = { HOME: join(tmp.path, 'home') };
});
afterEach(() => tmp.cleanup());

const userConfig = (text: string) => {
  mkdirSync(join(tmp.path, 'home', '.config', 'incrementum'), { recursive: true });
  writeFileSync(join(tmp.path, 'home', '.config', 'incrementum', 'config.toml'), text);
};

describe('loadConfig', () => {
  it('gives defaults when there is no file', () => {
    const c = loadConfig(repo, env);
    expect(c.job['test-commands']).toEqual([]);
    expect(c.job['auto-commit']).toBe(true);
    expect(c.job['max-iterations']).toBeGreaterThan(0);
    expect(c.agent.command).toBeUndefined();
    expect(c.workspace.copy).toEqual([]);
  });

  it('reads incrementum.toml, else .incrementum/config.toml', () => {
    mkdirSync(join(repo, '.incrementum'));
    writeFileSync(join(repo, '.incrementum', 'config.toml'), '[job]\ntest-commands = ["make test"]\n');
    expect(loadConfig(repo, env).job['test-commands']).toEqual(['make test']);
    writeFileSync(join(repo, 'incrementum.toml'), '[job]\ntest-commands = ["npm test"]\n');
    expect(loadConfig(repo, env).job['test-commands']).toEqual(['npm test']);
    expect(configFiles(repo, env)).toEqual([join(repo, 'incrementum.toml')]);
  });

  it('lets the repo override the user config key by key', () => {
    userConfig('[agent]\npreset = "claude"\n[job]\nmax-changes = 3\nauto-commit = false\n');
    writeFileSync(join(repo, 'incrementum.toml'), '[job]\nmax-changes = 5\n');
    const c = loadConfig(repo, env);
    expect(c.agent.preset).toBe('claude');
    expect(c.job['max-changes']).toBe(5);
    expect(c.job['auto-commit']).toBe(false);
  });

  it('honours XDG_CONFIG_HOME for the user file', () => {
    const xdg = join(tmp.path, 'xdg');
    mkdirSync(join(xdg, 'incrementum'), { recursive: true });
    writeFileSync(join(xdg, 'incrementum', 'config.toml'), '[workspace]\ncopy = [".env"]\n');
    expect(loadConfig(repo, { ...env, XDG_CONFIG_HOME: xdg }).workspace.copy).toEqual(['.env']);
  });

  it('names the file and the key of an invalid value', () => {
    writeFileSync(join(repo, 'incrementum.toml'), '[job]\nmax-iterations = "many"\n');
    expect(() => loadConfig(repo, env)).toThrow(UserError);
    expect(() => loadConfig(repo, env)).toThrow(/incrementum\.toml[\s\S]*job\.max-iterations/);
  });

  it('takes [agent] transcript-max-mb in MB, fractions too, and says what a bad one should be', () => {
    expect(loadConfig(repo, env).agent['transcript-max-mb']).toBe(32);
    writeFileSync(join(repo, 'incrementum.toml'), '[agent]\ntranscript-max-mb = 0.5\n');
    expect(loadConfig(repo, env).agent['transcript-max-mb']).toBe(0.5);
    for (const [value, says] of [
      ['"big"', /agent\.transcript-max-mb: must be a number of megabytes, e\.g\. 32 or 0\.5/],
      ['0', /agent\.transcript-max-mb: must be at least 0\.1/],
      ['-4', /agent\.transcript-max-mb: must be at least 0\.1/],
      ['inf', /agent\.transcript-max-mb: must be a number of megabytes/],
    ] as const) {
      writeFileSync(join(repo, 'incrementum.toml'), `[agent]\ntranscript-max-mb = ${value}\n`);
      expect(() => loadConfig(repo, env)).toThrow(UserError);
      expect(() => loadConfig(repo, env)).toThrow(says);
    }
  });

  it('names an unknown key, so a typo is not silently ignored', () => {
    writeFileSync(join(repo, 'incrementum.toml'), '[job]\ntest-command = ["npm test"]\n');
    expect(() => loadConfig(repo, env)).toThrow(/test-command/);
  });

  it('says which file is not TOML, and which user file is invalid', () => {
    writeFileSync(join(repo, 'incrementum.toml'), '[job\n');
    expect(() => loadConfig(repo, env)).toThrow(/incrementum\.toml is not valid TOML/);
    writeFileSync(join(repo, 'incrementum.toml'), '');
    userConfig('[agent]\ncommand = []\n');
    expect(() => loadConfig(repo, env)).toThrow(/config\.toml[\s\S]*agent\.command/);
  });
});
