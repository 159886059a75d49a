// OutputTail.excerpt: a failing command's first lines and its last, the lines
// between counted, whether its output was short or megabytes streamed in chunks.
import { describe, expect, it } from 'vitest';
import { OutputTail } from '../../src/job/workspace-setup.js';
import { elision, ends, joinEnds } from '../../src/text/head-tail.js';

const numbered = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${i + from}`);

describe('head and tail excerpts', () => {
  it('ends keeps both ends and counts the rest; one line left out is shown instead', () => {
    expect(ends(numbered(5), 2, 2)).toEqual({ front: numbered(5), omitted: 0, back: [] });
    expect(ends(numbered(6), 2, 2)).toEqual({
      front: ['line 1', 'line 2'],
      omitted: 2,
      back: ['line 5', 'line 6'],
    });
    expect(joinEnds('a', 2, 'b')).toBe(`a\n${elision(2)}\nb`);
    expect(elision(1)).toBe('… 1 line not shown …');
  });

  it('a short output is shown whole', () => {
    const t = new OutputTail();
    t.add('npm error code EUSAGE\nnpm error the reason\n\n');
    expect(t.excerpt()).toBe('npm error code EUSAGE\nnpm error the reason');
  });

  it("npm's reason on its first lines survives pages of usage text after it", () => {
    const t = new OutputTail();
    const out = [
      'npm error code EUSAGE',
      'npm error The `npm ci` command can only install with an existing package-lock.json or',
      ...numbered(80).map((l) => `npm error usage ${l}`),
      'npm error A complete log of this run can be found in: /tmp/x.log',
    ];
    for (const l of out) t.add(l + '\n');
    const x = t.excerpt(8, 12).split('\n');
    expect(x.slice(0, 2)).toEqual(out.slice(0, 2));
    expect(x[8]).toBe(elision(out.length - 20));
    expect(x.slice(9)).toEqual(out.slice(-12));
    // The tail alone, as before, loses it.
    expect(t.lines()).not.toContain('can only install');
  });

  it('megabytes in odd chunks: both ends kept, the lines between counted exactly', () => {
    const t = new OutputTail();
    const lines = ['the first line says why', ...numbered(100_000, 2)];
    const text = lines.join('\n') + '\n';
    for (let i = 0; i < text.length; i += 4093) t.add(text.slice(i, i + 4093));
    const x = t.excerpt(3, 4).split('\n');
    expect(x).toEqual([
      'the first line says why',
      'line 2',
      'line 3',
      elision(lines.length - 7),
      ...numbered(4, 99_998),
    ]);
    t.reset();
    expect(t.excerpt()).toBe('');
  });

  it('one huge line is cut in its middle, never grown past the bound', () => {
    const t = new OutputTail(100);
    t.add('A'.repeat(50) + 'x'.repeat(10_000) + 'Z'.repeat(50));
    const x = t.excerpt();
    expect(x.length).toBeLessThanOrEqual(2 * 100 + 4);
    expect(x.startsWith('A'.repeat(50))).toBe(true);
    expect(x.endsWith('Z'.repeat(50))).toBe(true);
  });
});
