// ii run's terminal drawing, on a stream that keeps what is written: the
// live area is erased before each log line and drawn again under it, at the
// terminal's width less one; without a terminal only the log lines are written.
import { describe, expect, it } from 'vitest';
import { LiveArea } from '../../src/cli/run/live-area.js';

function stream(tty: boolean, columns?: number) {
  const writes: string[] = [];
  return { writes, isTTY: tty, ...(columns ? { columns } : {}), write: (t: string) => writes.push(t) };
}

describe('LiveArea', () => {
  it('in a terminal, a log line erases the live area, goes above it, and the area is drawn again', () => {
    const out = stream(true, 61);
    const widths: number[] = [];
    let jobs = ['  job one', '  job two'];
    const area = new LiveArea(out, (w) => {
      widths.push(w);
      return [...jobs, 'run: 2/2 slots'];
    });
    area.say('started one');
    // Nothing drawn yet: nothing to erase.
    expect(out.writes).toEqual(['started one\n', '  job one\n  job two\nrun: 2/2 slots\n']);
    out.writes.length = 0;
    jobs = ['  job two'];
    area.say('job one completed');
    expect(out.writes).toEqual(['\x1b[3F\x1b[J', 'job one completed\n', '  job two\nrun: 2/2 slots\n']);
    out.writes.length = 0;
    area.draw();
    expect(out.writes).toEqual(['\x1b[2F\x1b[J', '  job two\nrun: 2/2 slots\n']);
    out.writes.length = 0;
    area.clear();
    area.clear();
    expect(out.writes).toEqual(['\x1b[2F\x1b[J']);
    expect(widths).toEqual([60, 60, 60]);
  });

  it('is 79 wide when the terminal does not say', () => {
    let width = 0;
    new LiveArea(stream(true), (w) => {
      width = w;
      return [];
    }).draw();
    expect(width).toBe(79);
  });

  it('without a terminal, writes the log lines and nothing else', () => {
    const out = stream(false);
    const area = new LiveArea(out, () => ['never']);
    area.say('a');
    area.draw();
    area.say('b');
    area.clear();
    expect(out.writes).toEqual(['a\n', 'b\n']);
  });
});
