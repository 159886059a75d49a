import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/job/config.js';
import { configTemplate } from '../../src/init/config-template.js';
import { guessTestCommands, guessTests } from '../../src/init/guess-tests.js';
import { detectPackageManagers, lockfileHash } from '../../src/session/lockfiles.js';
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

  it('says what named each guess', () => {
    put('package.json', JSON.stringify({ scripts: { test: 'vitest run' } }));
    put('yarn.lock', '');
    put('go.mod', 'module x\n');
    expect(guessTests(dir)).toEqual([
      {
        command: 'yarn test',
        reason: 'package.json has a test script, and yarn.lock names the package manager',
      },
      { command: 'go test ./...', reason: 'go.mod makes it a Go module' },
    ]);
    put('makefile', 'check:\n\t./run-tests\n');
    expect(guessTests(dir)).toEqual([{ command: 'make check', reason: 'makefile has a check target' }]);
  });

  it('knows go, cargo and pytest projects', () => {
    put('go.mod', 'module x\n');
    put('Cargo.toml', '[package]\n');
    put('pyproject.toml', '[tool.pytest.ini_options]\n');
    expect(guessTestCommands(dir)).toEqual(['go test ./...', 'cargo test', 'python -m pytest']);
  });
});

describe('detectPackageManagers', () => {
  const setup = () => detectPackageManagers(dir).map((m) => m.setup);

  it('needs nothing for a folder without lockfiles, nor for cargo and go', () => {
    put('Cargo.lock', '');
    put('go.sum', '');
    expect(setup()).toEqual([]);
  });

  it('installs a Node project without a lockfile, writing none, only when it has dependencies', () => {
    put('package.json', JSON.stringify({ scripts: { test: 'ava' } }));
    expect(setup()).toEqual([]);
    put('package.json', JSON.stringify({ scripts: { test: 'ava' }, devDependencies: { ava: '^3' } }));
    expect(detectPackageManagers(dir)).toEqual([
      { lockfile: 'package.json', setup: 'npm install --no-package-lock', dependencyDir: 'node_modules' },
    ]);
    put('package-lock.json', '{}');
    expect(setup()).toEqual(['npm ci']);
  });

  it('hashes package.json for setup when there is no Node lockfile, and only then', () => {
    put('package.json', JSON.stringify({ devDependencies: { ava: '^3' } }));
    const before = lockfileHash(dir, ['npm install --no-package-lock']);
    put('package.json', JSON.stringify({ devDependencies: { ava: '^3', xo: '^1' } }));
    expect(lockfileHash(dir, ['npm install --no-package-lock'])).not.toBe(before);
    put('package-lock.json', '{}');
    const locked = lockfileHash(dir, ['npm ci']);
    put('package.json', JSON.stringify({ devDependencies: { ava: '^3' }, scripts: { test: 'ava' } }));
    expect(lockfileHash(dir, ['npm ci'])).toBe(locked);
  });

  it('names the frozen install of each lockfile', () => {
    const cases: [string, string][] = [
      ['package-lock.json', 'npm ci'],
      ['pnpm-lock.yaml', 'pnpm install --frozen-lockfile'],
      ['yarn.lock', 'yarn install --frozen-lockfile'],
      ['bun.lock', 'bun install --frozen-lockfile'],
      ['bun.lockb', 'bun install --frozen-lockfile'],
      ['uv.lock', 'uv sync --locked'],
      ['poetry.lock', 'poetry install'],
      ['requirements.txt', 'python3 -m venv .venv && .venv/bin/pip install -r requirements.txt'],
    ];
    for (const [lockfile, command] of cases) {
      const one = join(tmp.path, lockfile);
      mkdirSync(one);
      writeFileSync(join(one, lockfile), '');
      expect(detectPackageManagers(one).map((m) => m.setup)).toEqual([command]);
    }
  });

  it('tells yarn berry from yarn 1, and takes one Node and one Python manager', () => {
    put('yarn.lock', '');
    put('package.json', JSON.stringify({ packageManager: 'yarn@4.1.0' }));
    expect(setup()).toEqual(['yarn install --immutable']);
    put('package.json', JSON.stringify({ packageManager: 'yarn@1.22.19' }));
    expect(setup()).toEqual(['yarn install --frozen-lockfile']);
    put('.yarnrc.yml', 'nodeLinker: node-modules\n');
    expect(setup()).toEqual(['yarn install --immutable']);
    put('pnpm-lock.yaml', '');
    put('uv.lock', '');
    expect(setup()).toEqual(['pnpm install --frozen-lockfile', 'uv sync --locked']);
  });

  it('hashes the lockfiles and the setup commands', () => {
    put('package-lock.json', '{"a":1}');
    const h = lockfileHash(dir, ['npm ci']);
    expect(lockfileHash(dir, ['npm ci'])).toBe(h);
    expect(lockfileHash(dir, ['npm install'])).not.toBe(h);
    put('package-lock.json', '{"a":2}');
    expect(lockfileHash(dir, ['npm ci'])).not.toBe(h);
  });
});

describe('config template', () => {
  it('is a valid config, with and without guessed commands', () => {
    for (const tests of [[], ['npm test', 'make "lint"']]) {
      put('incrementum.toml', configTemplate({ testCommands: tests, agent: 'claude' }));
      const c = loadConfig(dir, { HOME: join(tmp.path, 'home') });
      expect(c.job['test-commands']).toEqual(tests);
      expect(c.agent.preset).toBe('claude');
      expect(c.workspace.setup).toEqual([]);
      expect(c.job['baseline-tests']).toBe(true);
    }
    put(
      'incrementum.toml',
      configTemplate({
        testCommands: ['npm test'],
        setup: [{ command: 'npm ci', lockfile: 'package-lock.json' }],
      }),
    );
    const c = loadConfig(dir, { HOME: join(tmp.path, 'home') });
    expect(c.workspace.setup).toEqual(['npm ci']);
    expect(c.workspace.reuse).toBe('overlay');
  });

  it('for the scripted agent, shows how to give it a scenario (uncommented, it is valid)', () => {
    const t = configTemplate({ testCommands: ['true'], agent: 'scripted' });
    expect(t).toContain('# env = { II_SCRIPTED_SCENARIO = "scenario.json" }');
    put('incrementum.toml', t.replace('# env = { II_SCRIPTED', 'env = { II_SCRIPTED'));
    const c = loadConfig(dir, { HOME: join(tmp.path, 'home') });
    expect(c.agent.env).toEqual({ II_SCRIPTED_SCENARIO: 'scenario.json' });
  });
});

describe('ii init', () => {
  it('writes incrementum.toml once and never overwrites it without --force', () => {
    gitRepo(dir, { 'package.json': JSON.stringify({ scripts: { test: 'node --test' } }) });
    const env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: join(tmp.path, 'home') };
    const first = ii(['init'], { cwd: dir, env });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Test commands: npm test/);
    expect(first.stdout).not.toMatch(/Workspace setup/);
    expect(readFileSync(join(dir, 'incrementum.toml'), 'utf8')).toMatch(/test-commands = \["npm test"\]/);
    put('incrementum.toml', '# mine\n');
    const again = ii(['init'], { cwd: dir, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists; it was left as it is/);
    expect(readFileSync(join(dir, 'incrementum.toml'), 'utf8')).toBe('# mine\n');
    expect(ii(['init', '--force'], { cwd: dir, env }).code).toBe(0);
    expect(readFileSync(join(dir, 'incrementum.toml'), 'utf8')).toMatch(/\[job\]/);
  });

  it('writes the install step its lockfile names, with a comment saying why', () => {
    gitRepo(dir, {
      'package.json': JSON.stringify({ scripts: { test: 'node --test' } }),
      'package-lock.json': '{}',
    });
    const env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: join(tmp.path, 'home') };
    const r = ii(['init'], { cwd: dir, env });
    expect(r.stdout).toContain(
      "Workspace setup (from the files committed at main, which a job's workspace starts from):\n" +
        '  npm ci: package-lock.json is committed at main\n',
    );
    const text = readFileSync(join(dir, 'incrementum.toml'), 'utf8');
    expect(text).toMatch(
      /guessed from what a workspace has:\n# npm ci: package-lock.json is committed at main\):\nsetup = \["npm ci"\]/,
    );
  });

  it('guesses from the files committed at the base, not from a lockfile .gitignore keeps out of them', () => {
    // As a newcomer's package had it: package-lock.json on disk, ignored by `*-lock.*`.
    gitRepo(dir, {
      'package.json': JSON.stringify({
        scripts: { test: 'node --test' },
        devDependencies: { left: '1.0.0' },
      }),
      '.gitignore': 'node_modules/\n*-lock.*\n',
    });
    put('package-lock.json', '{}');
    put('yarn.lock', '');
    const env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: join(tmp.path, 'home') };
    const r = ii(['init'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    // Not `yarn test` either: yarn.lock is not committed (and not ignored).
    expect(r.stdout).toContain('Test commands: npm test (package.json has a test script)\n');
    expect(r.stdout).toContain(
      '  npm install --no-package-lock: package.json names dependencies and no lockfile is committed at main\n' +
        '  not from yarn.lock: it is in this checkout but not committed at main, so a workspace would not have it\n' +
        '  not from package-lock.json: it is in this checkout but not committed at main (`*-lock.*` in .gitignore:2 ignores it), so a workspace would not have it\n',
    );
    expect(readFileSync(join(dir, 'incrementum.toml'), 'utf8')).toMatch(
      /^setup = \["npm install --no-package-lock"\]$/m,
    );

    // Committed (forced past the rule), it is what a workspace has: npm ci.
    execFileSync('git', ['add', '-f', 'package-lock.json'], { cwd: dir });
    execFileSync('git', ['commit', '-qm', 'lockfile'], { cwd: dir });
    const again = ii(['init', '--force'], { cwd: dir, env });
    expect(again.stdout).toContain('  npm ci: package-lock.json is committed at main\n');
    expect(again.stdout).not.toContain('not from package-lock.json');
  });

  it('with no commit yet, guesses from the files git would commit: not an ignored lockfile', () => {
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    put(
      'package.json',
      JSON.stringify({ scripts: { test: 'node --test' }, dependencies: { left: '1.0.0' } }),
    );
    put('.gitignore', '*-lock.*\n');
    put('package-lock.json', '{}');
    const env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: join(tmp.path, 'home') };
    const r = ii(['init'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('from the files here that git does not ignore (there is no commit yet)');
    expect(r.stdout).toContain(
      '  npm install --no-package-lock: package.json names dependencies and there is no lockfile that git does not ignore\n',
    );
    expect(r.stdout).toContain(
      '  not from package-lock.json: it is in this checkout but ignored (`*-lock.*` in .gitignore:1 ignores it)',
    );
  });
});
