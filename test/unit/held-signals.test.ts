import { afterEach, expect, test } from 'vitest';
import { holdSignals } from '../../src/proc/held-signals.js';
import { waitFor } from '../helpers/tmp.js';

// SIGUSR2, not SIGINT: a held signal that slipped through would take its
// default action here, ending this test's worker (and failing the run).
const SIG = 'SIGUSR2' as const;
const handlers: ((s: NodeJS.Signals) => void)[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) process.off(SIG, h);
});

test('a signal that comes while held reaches the handler installed after, once, at release', async () => {
  const held = holdSignals([SIG]);
  process.kill(process.pid, SIG);
  await waitFor(() => held.held, 'the signal to be held');
  expect(held.held).toBe(SIG);
  const got: NodeJS.Signals[] = [];
  const h = (s: NodeJS.Signals) => void got.push(s);
  handlers.push(h);
  process.on(SIG, h);
  expect(got).toEqual([]);
  held.release();
  held.release();
  await waitFor(() => got.length > 0, 'the handler to get it');
  // The holder's own listener is gone: only the handler's is left.
  expect(process.listenerCount(SIG)).toBe(1);
  expect(got).toEqual([SIG]);
});

test('released with none held, nothing is sent and no listener is left', () => {
  const before = process.listenerCount(SIG);
  const held = holdSignals([SIG]);
  expect(process.listenerCount(SIG)).toBe(before + 1);
  held.release();
  expect(held.held).toBeNull();
  expect(process.listenerCount(SIG)).toBe(before);
});
