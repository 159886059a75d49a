import { expect, it } from 'vitest';
import { count } from '../../src/dashboard/view/count.js';

it('agrees the noun with the number', () => {
  expect(count(0, 'change')).toBe('0 changes');
  expect(count(1, 'change')).toBe('1 change');
  expect(count(2, 'iteration')).toBe('2 iterations');
  expect(count(1, 'entry', 'entries')).toBe('1 entry');
  expect(count(3, 'entry', 'entries')).toBe('3 entries');
});
