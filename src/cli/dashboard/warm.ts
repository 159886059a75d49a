// The board's first keypresses cost about twice what later ones do: V8 runs
// the drawing code (React's reconciler, Ink's layout and output) in its
// interpreter until it has been called often enough to be compiled. On a
// 20-job board the first sixteen moves took 189-204 ms of CPU, their worst
// 30 ms, where the next sixteen took 90-105; on three boards sharing a
// 2-core machine with 24 jobs those first presses were the keypress → frame
// p95 (bench/shared-store.bench.js). So once the board is drawn and idle it
// is drawn again off screen, from a copy of its state, and moved around
// there as a person would: the code is compiled before the person's own
// first keys (first sixteen 106-129 ms, worst 15; ~300 ms of CPU, once).
import { Writable } from 'node:stream';
import type { ReactElement } from 'react';
import type { DashboardStore } from '../../dashboard/view/store.js';
import { SMALL_BOARD_JOBS } from './heap.js';
import { offScreenKeyboard } from './off-screen.js';

/** The moves pressed off screen: down, up, across and back, as the first keys on a board usually are. */
export const WARM_KEYS: readonly string[] = ['j', 'j', 'j', 'k', 'k', 'k', 'L', 'h'];
/** Each move this many times: five times saved little more (first sixteen presses 76-84 ms against 84-104) for ~100 ms more CPU. */
const ROUNDS = 2;

/** Ink's render, as far as this uses it. */
type Render = (
  el: ReactElement,
  o: {
    stdout: NodeJS.WriteStream;
    stdin: NodeJS.ReadStream;
    stderr: NodeJS.WriteStream;
    patchConsole: false;
    exitOnCtrlC: false;
    interactive: true;
    maxFps: number;
  },
) => { unmount(): void };

export interface WarmOptions {
  render: Render;
  /** The board as drawn, on `store`. */
  element: (store: DashboardStore) => ReactElement;
  /** The board's store: copied, never changed. */
  dash: DashboardStore;
  /** A new, empty store like the board's, for the copy. */
  newStore: () => DashboardStore;
  columns: number;
  rows: number;
  maxFps: number;
  /** How long after being started it begins. */
  delayMs: number;
}

/** An off-screen terminal: output dropped, keys pressed on its stdin. */
function offScreen(columns: number, rows: number) {
  const stdout = Object.assign(
    new Writable({
      write(_c, _e, cb) {
        cb();
      },
    }),
    { columns, rows, isTTY: true },
  );
  return { stdout, stdin: offScreenKeyboard() };
}

/**
 * Draws the board off screen, from a copy of its state, and presses
 * WARM_KEYS in it, one key per turn of the event loop so the person's keys
 * and the jobs' updates go first. Stops, leaving nothing mounted, when done,
 * at `stop()` (the board calls it at the person's first key: their own keys
 * warm it as well, and theirs go first), or on any error (a warm-up is never
 * worth a crash).
 * Not done on a board of SMALL_BOARD_JOBS jobs or more: such a board is sized
 * for memory (heap.ts), and a second tree of it is what that saves.
 */
export function warmBoard(o: WarmOptions): { stop: () => void; done: Promise<void> } {
  let stopped = false;
  let unmount: (() => void) | null = null;
  let timer: NodeJS.Timeout | null = null;
  let wake: (() => void) | null = null;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    try {
      unmount?.();
    } catch {
      // Already gone.
    }
    unmount = null;
    wake?.();
  };
  const turn = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, 0);
      timer.unref();
    });
  const run = async () => {
    await new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, o.delayMs);
      timer.unref();
    });
    if (stopped || o.dash.getState().jobs.length >= SMALL_BOARD_JOBS) return;
    const copy = o.newStore();
    // The data, not the actions: each store's actions are bound to itself.
    copy.setState(
      Object.fromEntries(Object.entries(o.dash.getState()).filter(([, v]) => typeof v !== 'function')),
    );
    const term = offScreen(o.columns, o.rows);
    const app = o.render(o.element(copy), {
      stdout: term.stdout as unknown as NodeJS.WriteStream,
      stdin: term.stdin as unknown as NodeJS.ReadStream,
      stderr: term.stdout as unknown as NodeJS.WriteStream,
      patchConsole: false,
      exitOnCtrlC: false,
      interactive: true,
      maxFps: o.maxFps,
    });
    unmount = () => app.unmount();
    for (let i = 0; i < WARM_KEYS.length * ROUNDS && !stopped; i++) {
      await turn();
      if (!stopped) term.stdin.press(WARM_KEYS[i % WARM_KEYS.length]!);
    }
  };
  const done = run()
    .catch(() => {})
    .finally(stop);
  return { stop, done };
}
