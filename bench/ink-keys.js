// Keypress → frame through Ink's real render path, on a fake terminal, for
// the dashboard benchmarks. The frame a key is measured to is the first one
// drawn from a render that saw the key's effect (a probe records what each
// render saw), so a frame another change drew in between (a streaming job's
// live pane) does not end the measurement early.
import { Writable } from 'node:stream';
import { readFileSync } from 'node:fs';
import { fakeKeyboard } from './fake-keyboard.js';

export const now = () => performance.timeOrigin + performance.now();
export const pause = (ms) => new Promise((r) => setTimeout(r, ms));

export async function until(cond, what, ms = 10_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await pause(1);
  }
}

/** How long (ms) this thread has waited on a run queue for a core so far (Linux's schedstat), or null elsewhere. */
function coreWaitMs() {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return null;
  }
}

/** A terminal for Ink: stdout notes each frame and what the last render saw; stdin takes keypresses. */
export function fakeTerminal(seen) {
  const frames = { n: 0, at: 0, seen: undefined, also: undefined };
  const stdout = Object.assign(
    new Writable({
      write(_c, _e, cb) {
        frames.n++;
        frames.at = now();
        frames.seen = seen.value;
        frames.also = seen.also;
        cb();
      },
    }),
    { columns: 120, rows: 40, isTTY: true },
  );
  const stdin = fakeKeyboard();
  return { stdout, stdin, frames };
}

/**
 * Mounts `element` and times each key of `keys` (cycled, `n` presses) from
 * the press to the first frame drawn from a render that saw `state.get()` as
 * it was right after the press: a probe around the element records
 * `state.use()` (a hook) at each render, and each frame notes the last one.
 * Presses that change nothing are not counted; presses stop after `budgetMs`,
 * once `want` presses are counted or `stopWhen()` says so (`onPress(ms, cpuMs, coreWaitMs)` is told of each, with the
 * process's CPU time from the press to the frame). `also` is another such state,
 * noted in `frames.also`, and `after(frames)` runs while the app is still
 * mounted; the `prelude` keys are pressed first, untimed. `onRender` is
 * Ink's (each frame's render time); `inspect(ink)` is handed the Ink instance
 * (its root node's hooks, for a breakdown of a frame's time).
 */
export async function keyLatency({
  element,
  state,
  also,
  keys,
  n = 60,
  gapMs = 40,
  after,
  prelude = [],
  budgetMs = 30_000,
  want = Infinity,
  onPress,
  stopWhen = () => false,
  onRender,
  inspect,
}) {
  const { render } = await import('ink');
  // A terminal has colours: without them (chalk sees no TTY here) a moved
  // selection (inverse) draws the same frame as before, and Ink writes none.
  const { default: chalk } = await import('chalk');
  chalk.level ||= 1;
  const { createElement } = await import('react');
  const { RENDER_OPTIONS } = await import('../dist/src/cli/dashboard/run.js');
  const seen = { value: undefined };
  function Probe({ children }) {
    seen.value = state.use();
    if (also) seen.also = also.use();
    return children;
  }
  const t = fakeTerminal(seen);
  const app = render(createElement(Probe, null, element), {
    ...RENDER_OPTIONS,
    patchConsole: false,
    ...(onRender ? { onRender } : {}),
    stdout: t.stdout,
    stdin: t.stdin,
  });
  if (inspect) inspect((await import('../node_modules/ink/build/instances.js')).default.get(t.stdout));
  await until(() => t.frames.n > 0 && t.stdin.listenerCount('readable') > 0, 'the first frame');
  // Untimed keys first (to the column the timed ones move in).
  for (const k of prelude) {
    await pause(gapMs);
    t.stdin.press(k);
  }
  const out = [];
  const end = Date.now() + budgetMs;
  for (let i = 0; i < n && out.length < want && !stopWhen() && Date.now() < end; i++) {
    // Past Ink's frame throttle (maxFps), as a person's keypresses are.
    await pause(gapMs);
    const before = state.get();
    const t0 = now();
    const c0 = onPress ? process.cpuUsage() : null;
    const w0 = onPress ? coreWaitMs() : null;
    t.stdin.press(keys[i % keys.length]);
    const target = state.get();
    if (target === before) continue;
    const n0 = t.frames.n;
    // A job may move the selected card on before the frame: a frame of where it went counts.
    const shown = () => t.frames.seen === target || (t.frames.seen === state.get() && state.get() !== before);
    await until(() => t.frames.n > n0 && shown(), 'a frame showing the key', 30_000).catch((e) => {
      if (process.env.BENCH_DEBUG)
        process.stderr.write(
          `key ${i}: ${t.frames.n - n0} frames since; drew ${t.frames.seen}; want ${target}; now ${state.get()}\n`,
        );
      throw e;
    });
    out.push(t.frames.at - t0);
    if (c0) {
      const c = process.cpuUsage(c0);
      const w = w0 === null ? null : coreWaitMs() - w0;
      onPress(t.frames.at - t0, (c.user + c.system) / 1000, w);
    }
  }
  await after?.(t.frames);
  app.unmount();
  return out;
}

/** The floor: the same keypresses into a one-line Ink app that counts them (`o`: more of keyLatency's options). */
export async function floorKeyLatency(keys, n = 60, o = {}) {
  const { createElement, useSyncExternalStore } = await import('react');
  const { Text, useInput } = await import('ink');
  let count = 0;
  const listeners = new Set();
  const sub = (l) => (listeners.add(l), () => listeners.delete(l));
  const get = () => count;
  function Counter() {
    const c = useSyncExternalStore(sub, get);
    useInput(() => {
      count++;
      for (const l of listeners) l();
    });
    return createElement(Text, null, `keys: ${c}`);
  }
  return keyLatency({
    element: createElement(Counter),
    state: { get, use: () => useSyncExternalStore(sub, get) },
    keys,
    n,
    ...o,
  });
}
