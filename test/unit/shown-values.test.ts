// The small facts every view shares: how a job id, a cost and a parsed
// object are told, each decided in one place.
import { describe, expect, it } from 'vitest';
import { shortJobId } from '../../src/model/job-id.js';
import { isObj } from '../../src/model/obj.js';
import { formatCost } from '../../src/model/usage.js';
import { shortId } from '../../src/state/ids.js';

describe('shortJobId', () => {
  it('is the whole id as ii makes it, and cuts a longer one to the same 8', () => {
    const id = shortId('todo');
    expect(shortJobId(id)).toBe(id);
    expect(shortJobId('0123456789abcdef')).toBe('01234567');
  });
});

describe('formatCost', () => {
  it('shows four decimals under a dollar, two from a dollar up', () => {
    expect(formatCost(0)).toBe('$0.0000');
    expect(formatCost(0.0117)).toBe('$0.0117');
    expect(formatCost(0.99994)).toBe('$0.9999');
    expect(formatCost(1)).toBe('$1.00');
    expect(formatCost(12.5)).toBe('$12.50');
  });
});

describe('isObj', () => {
  it('is true of a parsed object only: not null, an array or a scalar', () => {
    expect(isObj({ a: 1 })).toBe(true);
    for (const v of [null, [], 'x', 1, undefined]) expect(isObj(v)).toBe(false);
  });
});
