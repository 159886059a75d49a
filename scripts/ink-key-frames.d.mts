// Types of scripts/ink-key-frames.mjs, for the test that checks its rewrites.
export declare const KEY_FRAME_MARK: string;
/** Per file of Ink's build folder: each [Ink's text, what replaces it]. */
export declare const KEY_FRAME_REWRITES: Record<string, [string, string][]>;
/** Applies KEY_FRAME_REWRITES to the Ink in `inkDir` (its package folder); returns the files changed. */
export declare function patchKeyFrames(inkDir: string): string[];
