import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress, elapsed } from '../../src/cli/progress.js';

function sink(isTTY: boolean) {
  const s = new PassThrough() as unknown as NodeJS.WriteStream & { text: () => string };
  let out = '';
  (s as unknown as PassThrough).on('data', (d: Buffer) => (out += d.toString()));
  Object.assign(s, { isTTY, columns: 40, text: () => out });
  return s;
}

/** What stays on a terminal: each line as last drawn ("\r\x1b[2K" wipes the line in hand). */
function scrollback(text: string): string[] {
  return text.split('\n').map((l) => l.split('\r\x1b[2K').at(-1)!);
}

describe('progress', () => {
  it('formats elapsed time', () => {
    expect(elapsed(9_400)).toBe('9s');
    expect(elapsed(72_000)).toBe('1m12s');
    expect(elapsed(2 * 3600_000 + 3 * 60_000)).toBe('2h03m');
  });

  it('prints plain lines once when not a terminal', async () => {
    const s = sink(false);
    const p = createProgress(s, { tty: false });
    p.stage('implementing', 'change 1');
    p.line('job abc started');
    p.stage('testing');
    p.done();
    await new Promise((r) => setImmediate(r));
    expect(s.text()).toBe('implementing change 1\njob abc started\ntesting\n');
    expect(s.text()).not.toContain('\x1b');
  });

  it('rewrites one live line with elapsed time on a terminal', async () => {
    let t = 0;
    const s = sink(true);
    const p = createProgress(s, { tty: true, now: () => t });
    p.stage('reviewing');
    t = 72_000;
    p.line('review: ACCEPT');
    p.done();
    await new Promise((r) => setImmediate(r));
    const text = s.text();
    expect(text).toContain('● reviewing  0s');
    expect(text).toContain('review: ACCEPT\n');
    expect(text).toContain('● reviewing  1m12s');
    expect(text.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('keeps every stage as a line in the scrollback on a terminal, the live line below the last', async () => {
    let t = 0;
    const s = sink(true);
    const p = createProgress(s, { tty: true, now: () => t });
    p.stage('→ implementing');
    t = 5_000;
    p.line('change 1 · iteration 1');
    p.stage('→ testing');
    t = 9_000;
    p.stage('→ reviewing');
    await new Promise((r) => setImmediate(r));
    expect(scrollback(s.text())).toEqual([
      '→ implementing',
      'change 1 · iteration 1',
      '→ testing',
      '→ reviewing',
      '● → reviewing  0s',
    ]);
    p.done();
    await new Promise((r) => setImmediate(r));
    expect(scrollback(s.text()).at(-1)).toBe('');
  });
});
