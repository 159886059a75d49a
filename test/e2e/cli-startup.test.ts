// What `ii`'s fast start rests on (bin/ii.js, rolldown.config.mjs): the CLI
// runs from its bundle in dist/cli alone, a short command loads no package
// from node_modules, Node's compile cache lives in the XDG cache dir and a
// cache that cannot be written costs nothing but the saving, and an older
// system Node still hands over to the pinned one.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  tmp = tempDir();
  mkdirSync(join(tmp.path, 'repo'));
  repo = gitRepo(join(tmp.path, 'repo'));
  env = {
    ...process.env,
    NO_COLOR: '1',
    HOME: tmp.path,
    XDG_STATE_HOME: join(tmp.path, 'state'),
    XDG_CACHE_HOME: join(tmp.path, 'cache'),
  };
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_DISABLE_COMPILE_CACHE;
});
afterEach(() => tmp.cleanup());

function run(
  args: string[],
  o: { node?: string; bin?: string; env?: NodeJS.ProcessEnv; pre?: string[] } = {},
) {
  const r = spawnSync(
    o.node ?? process.execPath,
    [...(o.pre ?? []), o.bin ?? join(ROOT, 'bin', 'ii.js'), ...args],
    {
      cwd: repo,
      env: { ...env, ...o.env },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A todo in the store (the state dir exists from then on). */
function seed() {
  const t = run(['todo', 'create', '--title', 'Start fast']);
  expect(t.code, t.stderr).toBe(0);
  return t.stdout.trim();
}

describe('ii start-up', () => {
  it('runs from bin/ and dist/cli alone (the bundle needs nothing else of dist)', () => {
    const id = seed();
    const pkg = join(tmp.path, 'pkg');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'bin'), join(pkg, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'dist', 'cli'), join(pkg, 'dist', 'cli'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
    const bin = join(pkg, 'bin', 'ii.js');
    const help = run(['--help'], { bin });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('job');
    const todos = run(['todo', 'list', '--json'], { bin });
    expect(todos.code, todos.stderr).toBe(0);
    expect((JSON.parse(todos.stdout) as { id: string }[]).map((t) => t.id)).toEqual([id]);
    const jobs = run(['job', 'list', '--json', '--all'], { bin });
    expect(jobs.code, jobs.stderr).toBe(0);
    expect(JSON.parse(jobs.stdout)).toEqual([]);
    const none = run(['job', 'show', 'ffff'], { bin });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^ii: /);
  });

  it('ii job list --json loads only its own bundle chunks: no package from node_modules, nothing of dist/src', () => {
    seed();
    const hook = join(tmp.path, 'hook.mjs');
    const out = join(tmp.path, 'loaded.txt');
    writeFileSync(
      hook,
      `import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const seen = [];
registerHooks({ load(url, ctx, next) { seen.push(url); return next(url, ctx); } });
process.on('exit', () => writeFileSync(${JSON.stringify(out)}, seen.join('\\n')));
`,
    );
    const r = run(['job', 'list', '--json'], { pre: ['--import', hook] });
    expect(r.code, r.stderr).toBe(0);
    const files = readFileSync(out, 'utf8')
      .split('\n')
      .filter((u) => u.startsWith('file:'));
    expect(files.filter((u) => u.includes('/node_modules/'))).toEqual([]);
    expect(files.filter((u) => u.includes('/dist/src/'))).toEqual([]);
    // The launcher, the entry and the chunks of the job list body and the store:
    // not the commander program (main.js), which the entry loads for any other command.
    expect(files.some((u) => u.endsWith('/dist/cli/start.js'))).toBe(true);
    expect(files.filter((u) => u.endsWith('/dist/cli/main.js'))).toEqual([]);
    // Nor the dead-runner cleanup and the zod schemas it brings, with no runner gone.
    expect(files.filter((u) => /\/dist\/cli\/(schemas|dead-runner|event)-/.test(u))).toEqual([]);
    // The launcher, the entry and the job list's one chunk (rolldown.config.mjs
    // bundles it apart): 35 files before, each a module for the ES loader to
    // resolve, read and link. An import on this path that splits it again is
    // a decision, not an accident.
    expect(files.map((u) => u.replace(/^.*\/(bin|dist\/cli)\//, '$1/'))).toEqual([
      'bin/ii.js',
      'dist/cli/start.js',
      'dist/cli/job-list.js',
    ]);
  });

  it("a command's files are ASCII, so Node reads each as a one-byte string", () => {
    // A file with one character past ASCII is decoded whole into UTF-16 as
    // it loads: 2-4 ms of ii job list's start for its 158 KB chunk, which
    // rolldown.config.mjs now writes with non-ASCII escaped and without
    // doc comments (122 KB).
    for (const f of ['bin/ii.js', 'dist/cli/start.js', 'dist/cli/job-list.js', 'dist/cli/main.js']) {
      const bytes = readFileSync(join(ROOT, f));
      const at = bytes.findIndex((b) => b > 0x7f);
      expect(
        at < 0 ? null : bytes.subarray(Math.max(0, at - 30), at + 4).toString('utf8'),
        `${f} holds a character past ASCII`,
      ).toBeNull();
    }
  });

  it('ii job list without commander reads its options as commander does, and leaves anything else to it', () => {
    seed();
    for (const args of [
      ['--json'],
      ['--json', '--all'],
      ['--status', 'active', '--json'],
      ['--status=failed', '--json'],
    ]) {
      const r = run(['job', 'list', ...args]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(JSON.parse(r.stdout), args.join(' ')).toEqual([]);
    }
    expect(run(['job', 'list']).stdout).toBe('No active jobs.\n');
    expect(run(['job', 'list', '--status', 'failed']).stdout).toBe('No failed jobs.\n');
    const bad = run(['job', 'list', '--status', 'bogus']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^ii: unknown status "bogus"/);
    // Left to commander: help, a missing value, an unknown option, an argument.
    const help = run(['job', 'list', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--status <status>');
    for (const args of [['--status'], ['--jsn'], ['extra']]) {
      const r = run(['job', 'list', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^error: /);
    }
  });

  it("keeps Node's compile cache in $XDG_CACHE_HOME/incrementum", () => {
    seed();
    const r = run(['job', 'list', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const dir = join(tmp.path, 'cache', 'incrementum', 'compile-cache');
    expect(existsSync(dir)).toBe(true);
    // One folder per Node version, holding the cached modules.
    const versions = readdirSync(dir);
    expect(versions.length).toBeGreaterThan(0);
    expect(readdirSync(join(dir, versions[0]!)).length).toBeGreaterThan(0);
  });

  it('runs as usual when the compile cache cannot be written', () => {
    seed();
    // A regular file where the cache's parent should be: no one (root either) can make the dir.
    const file = join(tmp.path, 'not-a-dir');
    writeFileSync(file, '');
    const cache = { XDG_CACHE_HOME: join(file, 'cache') };
    for (const args of [['--help'], ['job', 'list', '--json'], ['todo', 'list']]) {
      const r = run(args, { env: cache });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
    }
    const explicit = run(['job', 'list', '--json'], { env: { NODE_COMPILE_CACHE: join(file, 'x') } });
    expect(explicit.code, explicit.stderr).toBe(0);
    expect(explicit.stderr).toBe('');
  });

  // The README's usual case: a system Node older than 24 on PATH, the pinned one in node_modules.
  const older = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => {
    if (!existsSync(p)) return false;
    const v = spawnSync(p, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout ?? '';
    return Number(v.split('.')[0]) < 24;
  });
  it.skipIf(!older)('started by an older system Node, it re-runs itself on the pinned Node 24', () => {
    seed();
    const path = { PATH: '/usr/local/bin:/usr/bin:/bin' };
    const help = run(['--help'], { node: older!, env: path });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('job');
    const jobs = run(['job', 'list', '--json'], { node: older!, env: path });
    expect(jobs.code, jobs.stderr).toBe(0);
    expect(JSON.parse(jobs.stdout)).toEqual([]);
  });
});
