import type { EventEmitter } from 'node:events';

export interface FakeKeyboard extends EventEmitter {
  isTTY: true;
  data: string | null;
  setRawMode(): void;
  setEncoding(): void;
  resume(): void;
  pause(): void;
  ref(): void;
  unref(): void;
  read(): string | null;
  /** Makes `s` the next read and tells Ink it is there. */
  press(s: string): void;
}

export function fakeKeyboard(): FakeKeyboard;
