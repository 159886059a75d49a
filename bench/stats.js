// Small statistics helpers shared by the benchmarks.

/** The q-quantile (0..1) of a list of numbers, nearest-rank. */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export const median = (values) => quantile(values, 0.5);

/** Milliseconds taken by `fn` (awaited), measured with the monotonic clock. */
export async function timeMs(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** Runs `fn` `n` times and returns each duration in ms. */
export async function sample(n, fn) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await timeMs(fn));
  return out;
}

export const round = (x, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
