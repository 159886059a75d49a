// Types of scripts/ink-frame-caches.mjs, for the test that checks its rewrites.
/** Per file of Ink's build folder: each [Ink's text, what replaces it]. */
export declare const REWRITES: Record<string, [string, string][]>;
/** Applies REWRITES (or `rewrites`, marked with `mark`) to the Ink in `inkDir` (its package folder); returns the files changed. */
export declare function patchInk(
  inkDir: string,
  rewrites?: Record<string, [string, string][]>,
  mark?: string,
): string[];
