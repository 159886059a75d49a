// text/sha256.ts gives node:crypto's SHA-256, whatever the length (block
// edges included) and the characters (multi-byte UTF-8, lone surrogates).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/text/sha256.js';

const node = (s: string) => createHash('sha256').update(s).digest('hex');

describe('sha256Hex', () => {
  it('is SHA-256 (the standard vectors)', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it("gives node:crypto's hash at every length around the block edges and for any characters", () => {
    for (let n = 0; n < 300; n++) expect(sha256Hex('a'.repeat(n)), `length ${n}`).toBe(node('a'.repeat(n)));
    const chars = ['/', 'é', '😀', '\u0000', '\uffff', '\ud800', 'ж', ' '];
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 300; i++) {
      const s = Array.from({ length: Math.floor(rand() * 200) }, () =>
        rand() < 0.5
          ? String.fromCharCode(32 + Math.floor(rand() * 95))
          : chars[Math.floor(rand() * chars.length)]!,
      ).join('');
      expect(sha256Hex(s), JSON.stringify(s)).toBe(node(s));
    }
  });
});
