// Run by the build (scripts/bundle.mjs), beside scripts/ink-frame-caches.mjs:
// rewrites two of Ink's files in node_modules so that the frame a keypress
// makes is drawn at once, not held by Ink's frame throttle (maxFps).
//
// Ink draws at most one frame per 1000/maxFps ms (the board's 60: 17 ms);
// a commit within that time of the last frame is drawn when it ends. On a
// board with jobs running, frames of their updates come several times a
// second, so a key pressed just after one waited up to 17 ms for its frame,
// with nothing to do: the SQLite board's keypress → frame p95 was ~21 ms
// for ~8 ms of CPU (bench/shared-store.bench.js). Here a key marks its input
// stream, and the next commit (React makes it in a microtask of the key's
// handler) is drawn at once, the throttle's pending frame dropped (that
// frame drew this same tree). The mark is cleared once the key's task and
// its microtasks are done (setImmediate), so a key that changes nothing
// does not let a later update past the throttle. Updates that come without
// a key are throttled as before, but for the first after a key's frame:
// the throttle's window starts again with it (drawn at once), so held keys
// and streamed updates together make at most about twice maxFps frames.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { patchInk } from './ink-frame-caches.mjs';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
export const KEY_FRAME_MARK = '// incrementum: scripts/ink-key-frames.mjs';
// On the input stream: one stream is one Ink instance's, and a process (a test) may hold several.
const KEY = "Symbol.for('incrementum.keyFrame')";

export const KEY_FRAME_REWRITES = {
  'components/App.js': [
    [
      `    const emitInput = useCallback((input) => {
        handleInput(input);`,
      `    const emitInput = useCallback((input) => {
        ${KEY_FRAME_MARK}
        stdin[${KEY}] = true;
        setImmediate(() => {
            stdin[${KEY}] = false;
        });
        handleInput(input);`,
    ],
  ],
  'ink.js': [
    [
      `            this.rootNode.onRender = () => {
                this.hasPendingThrottledRender = true;
                throttled();
            };`,
      `            ${KEY_FRAME_MARK}
            this.rootNode.onRender = () => {
                const stdin = this.options.stdin;
                if (stdin?.[${KEY}]) {
                    stdin[${KEY}] = false;
                    throttled.cancel();
                    this.hasPendingThrottledRender = false;
                    this.onRender();
                    return;
                }
                this.hasPendingThrottledRender = true;
                throttled();
            };`,
    ],
  ],
};

/** Applies KEY_FRAME_REWRITES to the Ink in `inkDir` (its package folder); returns the files changed. */
export const patchKeyFrames = (inkDir) => patchInk(inkDir, KEY_FRAME_REWRITES, KEY_FRAME_MARK);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    patchKeyFrames(join(ROOT, 'node_modules', 'ink'));
  } catch (err) {
    console.error(`ink-key-frames: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
