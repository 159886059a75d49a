// The diff shown to a person (src/vcs/capped-diff.ts), on a real git repo with
// small limits: cut per file and in all with what was left out said, files
// over the size limit read from their blobs, binary files summarised.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cappedDiff, humanSize, type DiffLimits } from '../../src/vcs/capped-diff.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
const commit = (files: Record<string, string | Buffer | null>): string => {
  for (const [name, body] of Object.entries(files)) {
    if (body === null) rmSync(join(repo, name));
    else writeFileSync(join(repo, name), body);
  }
  git('add', '-A');
  git('commit', '-qm', 'c');
  return git('rev-parse', 'HEAD');
};
const lines = (n: number, tag = 'line') =>
  Array.from({ length: n }, (_, i) => `${tag} ${i + 1}`).join('\n') + '\n';
const LIMITS: DiffLimits = { fileLines: 20, totalLines: 60, lineBytes: 200, bigFileBytes: 100_000 };

beforeEach(() => {
  tmp = tempDir('ii-capped-');
  repo = gitRepo(tmp.path);
});
afterEach(() => tmp.cleanup());

describe('cappedDiff', () => {
  it('a small change comes whole, as git prints it', async () => {
    const a = git('rev-parse', 'HEAD');
    const b = commit({ 'a.txt': lines(5) });
    const d = await cappedDiff(repo, a, b, ['.'], LIMITS);
    expect(d.complete).toBe(true);
    expect(d.text).toBe(git('diff', '--no-color', a, b));
  });

  it('cuts a long file and says how many lines were left out and how to see them', async () => {
    const a = git('rev-parse', 'HEAD');
    const b = commit({ 'long file.txt': lines(100) });
    const d = await cappedDiff(repo, a, b, ['.'], LIMITS);
    const full = git('diff', '--no-color', a, b).split('\n');
    const shown = d.text.split('\n');
    expect(shown.slice(0, 20)).toEqual(full.slice(0, 20));
    expect(shown[20]).toBe(
      `… ${full.length - 20} more lines of long file.txt not shown (git diff ${a} ${b} -- 'long file.txt' for all of it)`,
    );
    expect(d.complete).toBe(false);
  });

  it('stops at the lines in all, naming the files not shown', async () => {
    const a = git('rev-parse', 'HEAD');
    const files: Record<string, string> = {};
    for (let i = 0; i < 8; i++) files[`f${i}.txt`] = lines(15, `f${i}`);
    const b = commit(files);
    const d = await cappedDiff(repo, a, b, ['.'], { ...LIMITS, totalLines: 50 });
    const shown = d.text.split('\n');
    expect(shown.filter((l) => !l.startsWith('…')).length).toBe(50);
    expect(d.text).toContain('… 1 more line of f0.txt not shown');
    expect(d.text).toContain('… the rest of f2.txt not shown');
    expect(shown.at(-1)).toBe(
      `… 5 more files not shown: f3.txt, f4.txt, f5.txt, f6.txt, f7.txt (git diff ${a} ${b} for all of it)`,
    );
  });

  it('cuts a very long line', async () => {
    const a = git('rev-parse', 'HEAD');
    const b = commit({ 'one.txt': 'x'.repeat(5000) + '\n' });
    const d = await cappedDiff(repo, a, b, ['.'], LIMITS);
    expect(d.text).toContain(`+${'x'.repeat(199)} …`);
    expect(d.text).not.toContain('x'.repeat(201));
    expect(d.complete).toBe(false);
  });

  it('a file over the size limit: its first lines from the blob, the rest counted, never diffed by git', async () => {
    const a = git('rev-parse', 'HEAD');
    const big = lines(20_000, 'big'); // ~200 KB, no newline issue
    const b = commit({ 'big.txt': big, 'tail.txt': 'no newline at the end' });
    const d = await cappedDiff(repo, a, b, ['.'], { ...LIMITS, bigFileBytes: 1000 });
    const shown = d.text.split('\n');
    const at = shown.indexOf('diff --git a/big.txt b/big.txt');
    expect(shown.slice(at, at + 7)).toEqual([
      'diff --git a/big.txt b/big.txt',
      'new file',
      '--- /dev/null',
      '+++ b/big.txt',
      '@@ -0,0 +1,20000 @@',
      '+big 1',
      '+big 2',
    ]);
    expect(d.text).toContain(
      `… 19,985 more lines of big.txt not shown (git diff ${a} ${b} -- big.txt for all of it)`,
    );
    // Removed, and modified: a removal shows its first lines, a modification is summarised.
    const c = commit({ 'big.txt': null });
    const removed = await cappedDiff(repo, b, c, ['.'], { ...LIMITS, bigFileBytes: 1000 });
    expect(removed.text).toContain('@@ -1,20000 +0,0 @@\n-big 1\n');
    const e = commit({ 'big.txt': big + 'one more\n' });
    const f = commit({ 'big.txt': big + 'two more\n' });
    const modified = await cappedDiff(repo, e, f, ['.'], { ...LIMITS, bigFileBytes: 1000 });
    expect(modified.text).toContain('text file too big to diff here: 189 KB → 189 KB');
    expect(modified.text).toContain(`… the changes to big.txt not shown (git diff ${e} ${f} -- big.txt`);
  });

  it('binary files are summarised by size, big or small', async () => {
    const a = git('rev-parse', 'HEAD');
    const bin = Buffer.alloc(300_000, 0);
    const b = commit({ 'big.bin': bin, 'small.bin': Buffer.from([0, 1, 2, 0]) });
    const d = await cappedDiff(repo, a, b, ['.'], LIMITS);
    expect(d.text).toContain('diff --git a/big.bin b/big.bin\nbinary file, 300 KB (added)');
    expect(d.text).toContain('binary file, 4 B (added)');
    expect(d.text).not.toContain('Binary files');
  });

  it('sizes read as people say them', () => {
    expect(humanSize(0)).toBe('0 B');
    expect(humanSize(1_500)).toBe('1.5 KB');
    expect(humanSize(150_050_950)).toBe('150 MB');
  });
});
