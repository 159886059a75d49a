import { describe, expect, it } from 'vitest';
import { EXCERPT_BYTES, EXCERPT_LINES, excerpt } from '../../src/journal/excerpt.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const lines = (n: number, width = 10) =>
  Array.from({ length: n }, (_, i) => `line ${String(i + 1).padStart(4, '0')} ${'x'.repeat(width)}`).join(
    '\n',
  );

describe('failure excerpt', () => {
  it('short output passes through whole, without a marker (trailing newlines dropped)', () => {
    expect(excerpt('a\nb\n\n')).toBe('a\nb');
    expect(excerpt('')).toBe('');
  });

  it('keeps the last 60 lines and says how many were cut', () => {
    const out = excerpt(lines(100));
    const outLines = out.split('\n');
    expect(outLines[0]).toBe('[… truncated: 40 earlier lines not shown; the full output is in the log]');
    expect(outLines).toHaveLength(EXCERPT_LINES + 1);
    expect(outLines[1]).toContain('line 0041');
    expect(outLines.at(-1)).toContain('line 0100');
  });

  it('caps the excerpt at 5 KB, marker included, dropping whole lines first', () => {
    const out = excerpt(lines(60, 200));
    expect(bytes(out)).toBeLessThanOrEqual(EXCERPT_BYTES);
    expect(out).toMatch(/^\[… truncated: \d+ earlier lines not shown/);
    expect(out.split('\n').at(-1)).toContain('line 0060');
    expect(out.split('\n')[1]).toMatch(/^line \d{4} x+$/); // whole lines only
  });

  it('cuts one huge line from its front on a character boundary', () => {
    const out = excerpt('head\n' + '日本'.repeat(5000) + 'END');
    expect(bytes(out)).toBeLessThanOrEqual(EXCERPT_BYTES);
    expect(out).toMatch(/^\[… truncated: 1 earlier line and \d+ bytes of the first line shown not shown/);
    expect(out.endsWith('END')).toBe(true);
    expect(out).not.toContain('\uFFFD'); // no broken UTF-8 sequence
  });

  it('redacts before cutting, so no half of a secret survives', () => {
    // Unredacted, the cut would fall inside the key and keep its tail.
    const key = 'sk-' + 'ant-' + 'a'.repeat(200);
    const text = `${'w'.repeat(100)} ${key} ${'z'.repeat(4900)}`;
    expect(bytes(text)).toBeGreaterThan(EXCERPT_BYTES);
    const out = excerpt(text);
    expect(out).not.toMatch(/a{5}/);
    expect(out).toContain('[REDACTED]');
    expect(bytes(out)).toBeLessThanOrEqual(EXCERPT_BYTES);
  });
});
