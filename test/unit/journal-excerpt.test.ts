// journal-v2 spec, Fixes Applied 6 "Error excerpt capping - BYTES + LINES":
// the last 60 lines, then at most 5 KB with `[Excerpt truncated to 5KB]`
// appended, as its getErrorExcerpt does, in UTF-8 bytes (not its substring's
// UTF-16 units) and never inside a character.
import { describe, expect, it } from 'vitest';
import { EXCERPT_BYTES, EXCERPT_LINES, excerpt, TRUNCATED_MARK } from '../../src/journal/excerpt.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const lines = (n: number, width = 10) =>
  Array.from({ length: n }, (_, i) => `line ${String(i + 1).padStart(4, '0')} ${'x'.repeat(width)}`).join(
    '\n',
  );

/** The spec's getErrorExcerpt on a string, with its cut made in bytes. */
function specExcerpt(content: string): string {
  const lastLines = content.split('\n').slice(-60);
  let out = lastLines.join('\n');
  if (Buffer.byteLength(out, 'utf-8') > 5 * 1024) {
    out = Buffer.from(out, 'utf8')
      .subarray(0, 5 * 1024)
      .toString('utf8');
    out += '\n\n[Excerpt truncated to 5KB]';
  }
  return out;
}

describe('failure excerpt (journal-v2, Fixes Applied 6)', () => {
  it('short output passes through whole, without a mark (trailing newlines dropped)', () => {
    expect(excerpt('a\nb\n\n')).toBe('a\nb');
    expect(excerpt('')).toBe('');
  });

  it('keeps the last 60 lines, as the spec slices them, with no mark of its own', () => {
    const out = excerpt(lines(100));
    expect(out).toBe(lines(100).split('\n').slice(-EXCERPT_LINES).join('\n'));
    expect(out.split('\n')[0]).toContain('line 0041');
    expect(out).toBe(specExcerpt(lines(100)));
  });

  it('over 5 KB: the first 5 KB of those lines, then "[Excerpt truncated to 5KB]"', () => {
    const text = lines(60, 200);
    const out = excerpt(text);
    expect(TRUNCATED_MARK).toBe('\n\n[Excerpt truncated to 5KB]');
    expect(out.endsWith('\n\n[Excerpt truncated to 5KB]')).toBe(true);
    const body = out.slice(0, -TRUNCATED_MARK.length);
    expect(bytes(body)).toBe(EXCERPT_BYTES);
    expect(text.startsWith(body)).toBe(true);
    expect(out).toBe(specExcerpt(text));
  });

  it('counts bytes, not characters, and never cuts inside one', () => {
    // 3 bytes a character: 5,000 characters are 15,000 bytes, under the
    // spec's substring (5,120 characters) but 3 times over 5 KB.
    const text = 'a' + '日'.repeat(5000);
    const out = excerpt(text);
    const body = out.slice(0, -TRUNCATED_MARK.length);
    expect(out.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(bytes(body)).toBeLessThanOrEqual(EXCERPT_BYTES);
    expect(bytes(body)).toBeGreaterThan(EXCERPT_BYTES - 3);
    expect(body).toBe('a' + '日'.repeat(Math.floor((EXCERPT_BYTES - 1) / 3)));
    expect(body).not.toContain('\uFFFD');
  });

  it('redacts before cutting, so no half of a secret survives', () => {
    // Unredacted, the cut would fall inside the key and keep its head.
    const key = 'sk-' + 'ant-' + 'a'.repeat(400);
    const text = `${'w'.repeat(5100)} ${key} ${'z'.repeat(100)}`;
    expect(bytes(text)).toBeGreaterThan(EXCERPT_BYTES);
    const out = excerpt(text);
    expect(out).not.toMatch(/sk-ant|a{5}/);
    expect(out).toContain('[REDACTED]');
    expect(out.endsWith(TRUNCATED_MARK)).toBe(true);
  });
});
