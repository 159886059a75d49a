// scripts/ink-key-frames.mjs rewrites Ink (at build) so a keypress's frame is
// drawn at once, not held by Ink's frame throttle (maxFps). Here: the Ink the
// tests and the bundle load has it, a key's frame comes before any timer runs
// even right after another frame, and an update with no key is still held.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Text, render, useInput } from 'ink';
import { useSyncExternalStore } from 'react';
import { expect, it } from 'vitest';
import { fakeKeyboard } from '../../bench/fake-keyboard.js';
import { KEY_FRAME_REWRITES } from '../../scripts/ink-key-frames.mjs';

const build = join(import.meta.dirname, '..', '..', 'node_modules', 'ink', 'build');

it('are in the Ink that is installed', () => {
  for (const [file, rewrites] of Object.entries(KEY_FRAME_REWRITES))
    for (const [, to] of rewrites) expect(readFileSync(join(build, file), 'utf8').split(to).length).toBe(2);
});

/** A terminal whose frames are kept as written, and whose keys are pressed by the test. */
function terminal() {
  const frames: string[] = [];
  const stdout = Object.assign(
    new Writable({
      write(c: Buffer, _e, cb) {
        frames.push(c.toString());
        cb();
      },
    }),
    { columns: 40, rows: 5, isTTY: true },
  );
  const stdin = fakeKeyboard();
  return { stdout, stdin, frames, shows: (s: string) => frames.some((f) => f.includes(s)) };
}

/** A counter that keys and the test (as a job's update would) both move. */
function counter() {
  let n = 0;
  const listeners = new Set<() => void>();
  const set = (v: number) => {
    n = v;
    for (const l of listeners) l();
  };
  function Counter() {
    const v = useSyncExternalStore(
      (l) => (listeners.add(l), () => listeners.delete(l)),
      () => n,
    );
    useInput((input) => {
      if (input === 'j') set(n + 1);
    });
    return <Text>{`count ${v}`}</Text>;
  }
  return { Counter, set, get: () => n };
}

/** Until the current task's microtasks and the next check phase are done: no timer has fired in between unless due. */
const afterTask = () => new Promise((r) => setImmediate(r));

it("draws a key's frame at once, right after another frame; an update with no key waits for the throttle", async () => {
  const t = terminal();
  const c = counter();
  // Two frames a second at most: a frame held by the throttle waits ~500 ms.
  const app = render(<c.Counter />, {
    stdout: t.stdout as unknown as NodeJS.WriteStream,
    stdin: t.stdin as unknown as NodeJS.ReadStream,
    maxFps: 2,
    interactive: true,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  try {
    await afterTask();
    expect(t.shows('count 0')).toBe(true);
    // An update right after the first frame: held.
    c.set(1);
    await afterTask();
    expect(t.shows('count 1')).toBe(false);
    // A key now: its frame (the update's too) is drawn at once.
    t.stdin.press('j');
    await afterTask();
    expect(t.shows('count 2')).toBe(true);
    // Two updates with no key after it: the second is held again.
    c.set(3);
    await afterTask();
    c.set(4);
    await afterTask();
    expect(t.shows('count 4')).toBe(false);
  } finally {
    app.unmount();
  }
});
