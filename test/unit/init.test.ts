import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/job/config.js';
import { configTemplate } from '../../src/init/config-template.js';
import { guessTestCommands } from '../../src/init/guess-tests.js';
import { ii } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let dir: string;
beforeEach(() => {
  tmp = tempDir();
  dir = join(tmp.path, 'repo');
  mkdirSync(dir);
});
afterEach(() => tmp.cleanup());

const put = (name: string, text: string) => writeFileSync(join(dir, name), text);

describe('guessTestCommands', () => {
  it('guesses nothing for an empty folder', () => expect(guessTestCommands(dir)).toEqual([]));

  it('uses the package manager whose lockfile is there', () => {
    put('package.json', JSON.stringify({ scripts: { test: 'vitest run' } }));
    expect(guessTestCommands(dir)).toEqual(['npm test']);
    put('pnpm-lock.yaml', '');
    expect(guessTestCommands(dir)).toEqual(['pnpm test']);
  });

  it("ignores npm's placeholder test script and unparsable package.json", () => {
    put('package.json', JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }));
    expect(guessTestCommands(dir)).toEqual([]);
    put('package.json', '{ nope');
    expect(guessTestCommands(dir)).toEqual([]);
  });

  it('prefers a Makefile test or check target', () => {
    put('package.json', JSON.stringify({ scripts: { test: 'jest' } }));
    put('Makefile', 'build:\n\tcc x.c\ncheck: build\n\t./x\n');
    expect(guessTestCommands(dir)).toEqual(['make check']);
    put('Makefile', 'test:\n\tgo test ./...\n');
    expect(guessTestCommands(dir)).toEqual(['make test']);
  });

  it('knows go, cargo and pytest projects', () => {
    put('go.mod', 'module x\n');
    put('Cargo.toml', '[package]\n');
    put('pyproject.toml', '[tool.pytest.ini_options]\n');
    expect(guessTestCommands(dir)).toEqual(['go test ./...', 'cargo test', 'python -m pytest']);
  });
});

describe('config template', () => {
  it('is a valid config, with and without guessed commands', () => {
    for (const tests of [[], ['npm test', 'make "lint"']]) {
      put('incrementum.toml', configTemplate({ testCommands: tests, agent: 'claude' }));
      const c = loadConfig(dir, { HOME: join(tmp.path, 'home') });
      expect(c.job['test-commands']).toEqual(tests);
      expect(c.agent.preset).toBe('claude');
    }
  });
});

describe('ii init', () => {
  it('writes incrementum.toml once and never overwrites it without --force', () => {
    gitRepo(dir, { 'package.json': JSON.stringify({ scripts: { test: 'node --test' } }) });
    const env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: join(tmp.path, 'home') };
    const first = ii(['init'], { cwd: dir, env });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Test commands: npm test/);
    expect(readFileSync(join(dir, 'incrementum.toml'), 'utf8')).toMatch(/test-commands = \["npm test"\]/);
    put('incrementum.toml', '# mine\n');
    const again = ii(['init'], { cwd: dir, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists; it was left as it is/);
    expect(readFileSync(join(dir, 'incrementum.toml'), 'utf8')).toBe('# mine\n');
    expect(ii(['init', '--force'], { cwd: dir, env }).code).toBe(0);
    expect(readFileSync(join(dir, 'incrementum.toml'), 'utf8')).toMatch(/\[job\]/);
  });
});
