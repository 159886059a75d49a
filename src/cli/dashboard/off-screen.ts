// A terminal for Ink that is not there: what the board is drawn into off
// screen (warm.ts), and what the benches and a test draw it into and press
// keys in (bench/fake-keyboard.js, bench/ink-keys.js).
import { EventEmitter } from 'node:events';

/** Ink's stdin: raw mode, readable events and read(); `press(s)` makes `s` the next read and tells Ink. */
export function offScreenKeyboard() {
  let pending: string | null = null;
  const keyboard = Object.assign(new EventEmitter(), {
    isTTY: true as const,
    setRawMode() {},
    setEncoding() {},
    resume() {},
    pause() {},
    ref() {},
    unref() {},
    read(): string | null {
      const d = pending;
      pending = null;
      return d;
    },
    press(s: string) {
      pending = s;
      keyboard.emit('readable');
    },
  });
  return keyboard;
}

export type OffScreenKeyboard = ReturnType<typeof offScreenKeyboard>;
