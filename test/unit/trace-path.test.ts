// II_TRACE given as a relative path is resolved once, against the cwd of the
// process that reads it first, and handed on absolute: a child started in
// another directory (a runner, an agent) marks into the same file.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('ii-trace-');
});
afterEach(() => tmp.cleanup());

// The built module (npm test builds first): a child node started here loads
// it as it is, and the source's relative imports ('./priority.js') name files
// only the build has.
const trace = resolve('dist/src/proc/trace.js');

it('a relative II_TRACE is resolved once and passed on absolute to children in other directories', () => {
  const elsewhere = join(tmp.path, 'elsewhere');
  mkdirSync(elsewhere);
  const child = `const { mark } = await import(${JSON.stringify(trace)}); mark('child');`;
  const parent =
    `const { mark } = await import(${JSON.stringify(trace)}); mark('parent');` +
    `const { execFileSync } = await import('node:child_process');` +
    `execFileSync(process.execPath, ['--input-type=module', '-e', ${JSON.stringify(child)}], { cwd: ${JSON.stringify(elsewhere)}, stdio: 'inherit' });`;
  execFileSync(process.execPath, ['--input-type=module', '-e', parent], {
    cwd: tmp.path,
    env: { ...process.env, II_TRACE: 'trace.jsonl' },
    stdio: 'inherit',
    timeout: 60_000,
  });
  const marks = readFileSync(join(tmp.path, 'trace.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { mark: string }).mark);
  expect(marks).toEqual(['parent', 'child']);
});

it("treeCpuMs counts a process's descendants (an agent under bwrap), and is null for none or when not tracing", () => {
  // A shell whose child burns 200 ms of its own CPU, says so, and waits to be read; then its group is ended.
  const burn =
    'const c=()=>{const u=process.cpuUsage();return (u.user+u.system)/1000};while(c()<200);console.log(1);setTimeout(()=>{},60000)';
  const code =
    `const { treeCpuMs } = await import(${JSON.stringify(trace)});` +
    `const { spawn } = await import('node:child_process');` +
    `const sh = spawn('sh', ['-c', '"$0" -e "$1"; :', process.execPath, ${JSON.stringify(burn)}], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });` +
    `await new Promise((r) => sh.stdout.once('data', r));` +
    `const out = JSON.stringify([treeCpuMs(sh.pid), treeCpuMs(2 ** 22 + 1)]);` +
    `process.kill(-sh.pid, 'SIGKILL');` +
    `process.stdout.write(out, () => process.exit(0));`;
  const run = (env: NodeJS.ProcessEnv) =>
    JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', code], {
        cwd: tmp.path,
        env: { ...process.env, ...env },
        encoding: 'utf8',
        timeout: 60_000,
      }),
    ) as [number | null, number | null];
  const [tree, none] = run({ II_TRACE: 'trace.jsonl' });
  // The child counts its 200 ms with getrusage, treeCpuMs reads /proc: two
  // clocks that differ by a tick or so (198.9 once in CI). The shell alone
  // takes a few ms, so a count that missed the child stays far below.
  expect(tree).toBeGreaterThanOrEqual(150);
  expect(none).toBeNull();
  expect(run({ II_TRACE: '' })).toEqual([null, null]);
});
