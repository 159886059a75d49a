// `ii run`'s jobs below the person's own work: how far ([run] nice, --nice).
// Apart from the config schema, so `ii run`'s option parser reads it without zod.

/** The highest nice value there is (the lowest priority): POSIX's NZERO - 1. */
export const MAX_NICE = 19;

/**
 * `[run] nice` unless set. bench/shared-store.bench.js's boards (3 machines ×
 * `ii run --jobs 8`, a 2-core machine at load 32–40) waited 1.9–4.4 s at p95
 * with the jobs at nice 0, 1.4–2.3 s at 5 and 0.17–0.34 s at 10: 5 weighs a
 * job a third of the board, 10 a tenth. 19 (a sixty-eighth) did more for
 * the board: with 24 jobs starting, the sessions of each (runner, agent,
 * tests; Linux weighs each session as one) at a tenth still outweighed it,
 * p95 36-75 ms over four runs against 13.6 ms at 19. But at 19 a person's
 * own busy process all but stops the jobs: test/e2e/run-land-stress.test.ts,
 * beside two busy loops, took over 180 s against 79 s at 10. 10 stays the
 * default; `--nice 19` is there for a machine shared with heavy work. What
 * 19 did for the board came mostly from the jobs' starts, which are now at
 * 19 for their first seconds (proc/priority.ts bootLow).
 */
export const DEFAULT_RUN_NICE = 10;

export const NICE_HELP = `must be a whole number from 0 (jobs at your own priority) to ${MAX_NICE} (the lowest)`;

/** The value of `[run] nice` or `--nice` in `text`, or null when it is not one. */
export function parseNice(text: string): number | null {
  if (!/^\d+$/.test(text.trim())) return null;
  const n = Number(text);
  return n <= MAX_NICE ? n : null;
}
