import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLineValues, JsonLinesTail } from '../../src/state/jsonl.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir('ii-jsonl-')));
afterEach(() => tmp.cleanup());

const line = (i: number, pad = '') => JSON.stringify({ i, pad }) + '\n';

describe('JsonLinesTail', () => {
  it('with lastBytes, reads only the whole lines at the end of a long file, then what is appended', () => {
    const p = join(tmp.path, 't.jsonl');
    let text = '';
    for (let i = 0; i < 1000; i++) text += line(i, 'x'.repeat(50));
    writeFileSync(p, text);
    const tail = new JsonLinesTail<{ i: number }>(p, undefined, { lastBytes: 1000 });
    const first = tail.read();
    // No torn line at the cut: every line read is JSON, and they run to the end.
    expect(first.every((l) => l.ok)).toBe(true);
    const is = first.map((l) => (l.ok ? l.value.i : -1));
    expect(is.length).toBeGreaterThan(5);
    expect(is.length).toBeLessThan(20);
    expect(is.at(-1)).toBe(999);
    expect(is).toEqual(is.map((_, k) => 1000 - is.length + k));
    appendFileSync(p, line(1000));
    expect(tail.read().map((l) => (l.ok ? l.value.i : -1))).toEqual([1000]);
  });

  it('with lastBytes, skips ahead to the end when far behind, and counts each break (skip or start-over)', () => {
    const p = join(tmp.path, 'w.jsonl');
    writeFileSync(p, line(0));
    const tail = new JsonLinesTail<{ i: number }>(p, undefined, { lastBytes: 1000 });
    expect(tail.read().map((l) => (l.ok ? l.value.i : -1))).toEqual([0]);
    appendFileSync(p, line(1));
    expect(tail.read().map((l) => (l.ok ? l.value.i : -1))).toEqual([1]);
    expect(tail.breaks).toBe(0);
    // A writer far ahead (a flooding agent): only about the last 1000 bytes are read, whole lines only.
    let text = '';
    for (let i = 2; i < 2000; i++) text += line(i, 'x'.repeat(50));
    appendFileSync(p, text);
    const got = tail.read();
    expect(got.every((l) => l.ok)).toBe(true);
    const is = got.map((l) => (l.ok ? l.value.i : -1));
    expect(is.length).toBeLessThan(20);
    expect(is).toEqual(is.map((_, k) => 2000 - is.length + k));
    expect(tail.breaks).toBe(1);
    // A file that shrank (a capped transcript dropping its middle): read again from near its end.
    writeFileSync(p, line(7) + line(8));
    expect(tail.read().map((l) => (l.ok ? l.value.i : -1))).toEqual([7, 8]);
    expect(tail.breaks).toBe(2);
    // Rewritten in place and grown past where the reader was: the size alone cannot tell, the bytes before it can.
    writeFileSync(p, line(20) + line(21) + line(22));
    expect(tail.read().map((l) => (l.ok ? l.value.i : -1))).toEqual([20, 21, 22]);
    expect(tail.breaks).toBe(3);
  });

  it('keeps the first line whole when the cut falls just after a newline', () => {
    const p = join(tmp.path, 'u.jsonl');
    const a = line(1);
    const b = line(2);
    writeFileSync(p, a + b);
    const tail = new JsonLinesTail<{ i: number; pad: string }>(p, undefined, {
      lastBytes: Buffer.byteLength(b),
    });
    expect(tail.read().map((l) => (l.ok ? l.value.i : -1))).toEqual([2]);
  });

  it('keeps a character whole when a writer splits it across two reads', () => {
    const p = join(tmp.path, 'v.jsonl');
    writeFileSync(p, '');
    const tail = new JsonLinesTail<{ i: number; pad: string }>(p);
    const c = Buffer.from(line(3, 'é€😀'));
    appendFileSync(p, c.subarray(0, 17));
    expect(tail.read()).toEqual([]);
    appendFileSync(p, c.subarray(17));
    const got = tail.read();
    expect(got.map((l) => (l.ok ? l.value.pad : l.error))).toEqual(['é€😀']);
  });
});

describe('jsonLineValues', () => {
  it('parses a file a part at a time: lines across reads, a line longer than a read, characters split, bad lines skipped', () => {
    const p = join(tmp.path, 'big.jsonl');
    const long = 'é'.repeat(700_000); // 1.4 MB as UTF-8: longer than one read
    const lines: string[] = [];
    for (let i = 0; i < 30_000; i++) lines.push(JSON.stringify({ i, pad: i === 12_345 ? long : `€${i}` }));
    lines.splice(100, 0, 'not JSON', '');
    writeFileSync(p, lines.join('\n') + '\n{"torn');
    const got = [...jsonLineValues(p)] as { i: number; pad: string }[];
    expect(got.map((v) => v.i)).toEqual(Array.from({ length: 30_000 }, (_, i) => i));
    expect(got[12_345]!.pad).toBe(long);
    expect(got[29_999]!.pad).toBe('€29999');
  });

  it('throws when the file is missing, as it is read', () => {
    expect(() => [...jsonLineValues(join(tmp.path, 'none.jsonl'))]).toThrow(/ENOENT/);
  });
});
