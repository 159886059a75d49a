import { describe, expect, it } from 'vitest';
import { grouped } from '../../src/text/grouped.js';

describe('grouped', () => {
  it('writes whole numbers as toLocaleString("en-US") does', () => {
    const values = [
      0,
      7,
      999,
      1000,
      1001,
      12_345,
      999_999,
      1_000_000,
      1_234_567_890,
      Number.MAX_SAFE_INTEGER,
    ];
    for (const v of [...values, ...values.filter(Boolean).map((x) => -x)])
      expect(grouped(v)).toBe(v.toLocaleString('en-US'));
    expect(grouped(12_345)).toBe('12,345');
  });

  it('leaves what is not a safe integer to toLocaleString', () => {
    for (const v of [1.5, 1234.5678, 2 ** 60, Number.NaN, Infinity])
      expect(grouped(v)).toBe(v.toLocaleString('en-US'));
  });
});
