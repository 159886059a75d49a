// ii todo create | edit --description-file: a description too long for an
// argument, from a file or from stdin, kept whole (10 MB through stdin).
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { II, ii } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  tmp = tempDir();
  mkdirSync(join(tmp.path, 'repo'));
  repo = gitRepo(join(tmp.path, 'repo'));
  env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: tmp.path, NO_COLOR: '1' };
});
afterEach(() => tmp.cleanup());
const run = (args: string[]) => ii(args, { cwd: repo, env });
/** ii with room for 10 MB each way (spawnSync keeps 1 MB of output by default). */
const big = (args: string[], input = '') => {
  const r = spawnSync(process.execPath, [II, ...args], {
    cwd: repo,
    env: { ...process.env, ...env },
    input,
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
    timeout: 120_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
};
const descriptionOf = (id: string) =>
  (JSON.parse(big(['todo', 'show', id, '--json']).stdout) as { description: string }).description;

/** About `bytes` of text, lines numbered so a cut or a reordering shows, with non-ASCII in each. */
function spec(bytes: number): string {
  const lines: string[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const l = `line ${i}: the spec says ünïcode ✓ ${'x'.repeat(i % 50)}`;
    lines.push(l);
    n += Buffer.byteLength(l) + 1;
  }
  return lines.join('\n') + '\n';
}

it('a 10 MB description through stdin is kept whole, and ii todo show prints all of it', () => {
  const text = spec(10 * 2 ** 20);
  const c = big(['todo', 'create', '--title', 'Big spec', '--description-file', '-'], text);
  expect(c.code, c.stderr).toBe(0);
  const id = c.stdout.trim();
  expect(descriptionOf(id) === text).toBe(true);
  const shown = big(['todo', 'show', id]);
  expect(shown.code, shown.stderr).toBe(0);
  const body = shown.stdout.split('\n').filter((l) => l.startsWith('  line '));
  expect(body.length).toBe(text.split('\n').length - 1);
  expect(body.at(-1)).toBe(`  ${text.trimEnd().split('\n').at(-1)}`);
});

it('edit takes a file; --description and --description-file together, a missing file or one not UTF-8 are refused, changing nothing', () => {
  const id = run(['todo', 'create', '--title', 'T', '--description', 'short']).stdout.trim();
  const file = join(tmp.path, 'spec.md');
  writeFileSync(file, '# Spec\n\n- one\n- two\n');
  const e = run(['todo', 'edit', id, '--description-file', file]);
  expect(e.code, e.stderr).toBe(0);
  expect(descriptionOf(id)).toBe('# Spec\n\n- one\n- two\n');

  const both = run(['todo', 'edit', id, '--description', 'x', '--description-file', file]);
  expect(both.code).toBe(2);
  expect(both.stderr).toContain('--description or --description-file, not both');
  const missing = run(['todo', 'create', '--title', 'U', '--description-file', join(tmp.path, 'nope.md')]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain(
    `cannot read --description-file ${join(tmp.path, 'nope.md')}: no such file`,
  );
  const binary = join(tmp.path, 'image.png');
  writeFileSync(binary, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00]));
  const notText = run(['todo', 'edit', id, '--description-file', binary]);
  expect(notText.code).toBe(2);
  expect(notText.stderr).toContain('is not UTF-8 text');
  expect(descriptionOf(id)).toBe('# Spec\n\n- one\n- two\n');
  expect(JSON.parse(run(['todo', 'list', '--json']).stdout)).toHaveLength(1);
  expect(run(['todo', 'create', '--help']).stdout).toContain('--description-file <file>');
});
