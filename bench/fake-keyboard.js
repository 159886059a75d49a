// A keyboard for Ink on a fake terminal: the stdin Ink reads keys from, with
// press() for the bench or test pressing them. Shared by bench/ink-keys.js,
// bench/dashboard-rss.child.js and test/components/ink-key-frames.test.tsx.
import { EventEmitter } from 'node:events';

/** Ink's stdin: raw mode, readable events and read(); press(s) makes `s` the next read. */
export function fakeKeyboard() {
  return Object.assign(new EventEmitter(), {
    isTTY: true,
    data: null,
    setRawMode() {},
    setEncoding() {},
    resume() {},
    pause() {},
    ref() {},
    unref() {},
    read() {
      const d = this.data;
      this.data = null;
      return d;
    },
    press(s) {
      this.data = s;
      this.emit('readable');
    },
  });
}
