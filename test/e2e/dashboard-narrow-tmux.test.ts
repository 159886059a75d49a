// The board at 80×24 in a real terminal (tmux), over a real job that failed
// on the built-in scripted agent (issue 26, items 5 and 8): with nine columns
// the empty ones collapse and the selected failed job's whole first reason
// line is on screen, in the pane under the board; the log (`l`)
// shows exactly the lines `ii job logs` prints, in order, across scrolling,
// with wrapped long lines, blank lines, multi-line entries, a tab and wide
// characters; j, k, g, G and the page keys move like a pager's; and at 160×45
// j at the end overlaps nothing.
import { afterEach, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { JobFixture } from '../helpers/job.js';
import { runningIn } from '../helpers/procs.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { waitFor } from '../helpers/tmp.js';
import { shortJobId } from '../../src/model/job-id.js';

let f: JobFixture;
let t: Tmux | null = null;
afterEach(() => {
  t?.kill();
  t = null;
  for (const pid of runningIn(f.tmp.path))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  f.cleanup();
});

/** Cells a character of this test's text takes: its CJK and emoji two, the rest one. */
const cells = (c: string) => (/[\u3000-\u9fff\uff00-\uffef]|\p{Extended_Pictographic}/u.test(c) ? 2 : 1);

/** A printed line as a terminal `width` wide shows it: tabs to stops of 8, cut at the edge. */
function rowsOf(line: string, width: number): string[] {
  let text = '';
  for (const c of line)
    text += c === '\t' ? ' '.repeat(8 - ([...text].reduce((n, x) => n + cells(x), 0) % 8)) : c;
  const rows: string[] = [];
  let row = '';
  let used = 0;
  for (const c of text) {
    if (used + cells(c) > width && row) {
      rows.push(row);
      row = '';
      used = 0;
    }
    row += c;
    used += cells(c);
  }
  rows.push(row);
  return rows;
}

/** The position the log's title gives: its first and last rows shown (1-based) and the total. */
function position(screen: string): { first: number; last: number; total: number } | null {
  const m = /rows (\d+)–(\d+) of (\d+)/.exec(screen);
  return m ? { first: Number(m[1]), last: Number(m[2]), total: Number(m[3]) } : null;
}

const AGENT_TEXT = [
  'A first message\nwith a second line\n\nand one after a blank line.',
  `A long line: ${'the quick brown fox jumps over the lazy dog, '.repeat(5)}end.`,
  'columns\tsplit\tby tabs',
  `wide: ${'日本語のテキスト 🎉 '.repeat(8)}end.`,
];

it.skipIf(!hasTmux)(
  "at 80×24 the failed job's whole reason is on screen and the log shows what ii job logs prints, scrolled like a pager; at 160×45 nothing overlaps",
  async () => {
    f = new JobFixture('ii-dash-narrow-');
    f.setup();
    const scenario = f.scenario('fails', {
      implement: [
        {
          actions: [
            ...AGENT_TEXT.map((text) => ({ type: 'message', text })),
            { type: 'write', path: 'work.txt', content: 'half done\n' },
            { type: 'crash', code: 7 },
          ],
        },
      ],
    });
    const todo = f.run(['todo', 'create', '--title', 'a todo whose job fails']).stdout.trim();
    // A second todo keeps the Backlog column: nine columns on the jobs board.
    f.run(['todo', 'create', '--title', 'another todo']);
    const done = f.run(['job', 'do', todo], scenario);
    expect(done.code).toBe(1);
    const id = /job ([0-9a-f]+) for todo/.exec(done.stderr)![1]!;
    const logs = f.run(['job', 'logs', id]);
    expect(logs.code).toBe(0);
    const printed = logs.stdout.replace(/\n$/, '').split('\n');
    // The log holds what the test needs it to: the lines that were lost or overlapped.
    for (const text of ['and one after a blank line.', 'columns\tsplit', '日本語のテキスト 🎉'])
      expect(logs.stdout).toContain(text);

    t = new Tmux(f.tmp.path);
    const env = {
      ...(f.env as Record<string, string>),
      NO_COLOR: '1',
      CI: 'true',
      PATH: process.env.PATH ?? '',
    };
    t.start([process.execPath, II, 'dashboard'], { cwd: f.repo, env, columns: 80, rows: 24 });
    await t.screenWith('incrementum · Jobs', 'another todo');

    // ── 80×24, nine columns: the failed job's whole first reason line ────
    // The empty columns are stacked narrow, with their counts.
    const board = await t.screenWith('Impl 0', 'Test 0', 'Land 0', 'Fail (1)');
    const first = f
      .show(id)
      .failure_reason!.split('\n')
      .find((l) => l.trim())!
      .trim();
    expect(first.length).toBeGreaterThan(80);
    // The card cuts it; the pane under the board has it whole, word-wrapped.
    const reason = await waitFor(
      () => {
        const s = t!.capture();
        return s.includes(`job ${shortJobId(id)} failed`) ? s : null;
      },
      `the reason pane; screen:\n${board}`,
      20_000,
      50,
    );
    const joined = (s: string) =>
      s
        .split('\n')
        .map((l) => l.trim())
        .join(' ')
        .replace(/\s+/g, ' ');
    expect(joined(reason)).toContain(first.replace(/\s+/g, ' '));
    expect(reason).toContain('scripted agent: crashing on purpose (exit 7)');

    // The cursor is on the failed job (the only job): l opens its log.
    t.send('l');
    /** The screen's log rows, checked against `ii job logs` cut at `width`; returns the position. */
    const check = (screen: string, width: number) => {
      const expected = printed.flatMap((l) => rowsOf(l, width)).map((r) => r.trimEnd());
      const at = position(screen);
      expect(at, screen).not.toBeNull();
      expect(at!.total).toBe(expected.length);
      // Under the header and the log's title: its rows, then the status bar.
      const rows = screen.split('\n').slice(2, 2 + at!.last - at!.first + 1);
      expect(rows.map((r) => r.trimEnd())).toEqual(expected.slice(at!.first - 1, at!.last));
      return at!;
    };
    /** A whole frame (not one caught mid-redraw) that check() accepts at width. */
    const whole = (s: string, width: number): boolean => {
      try {
        check(s, width);
        return true;
      } catch {
        return false;
      }
    };
    const atEnd = await waitFor(
      () => {
        const s = t!.capture();
        return s.includes(`Log of job ${shortJobId(id)}`) && s.includes('(end)') && whole(s, 80) ? s : null;
      },
      `the log at its end; screen:\n${t.capture()}`,
      20_000,
      50,
    );

    // ── 80×24: from the top, page by page to the end ─────────────────────
    const end = check(atEnd, 80);
    expect(end.last).toBe(end.total);
    expect(end.total).toBeGreaterThan(2 * 20); // more than two pages
    const seen = new Set<number>();
    const screenAt = async (first: number, width = 80) =>
      waitFor(
        () => {
          const s = t!.capture();
          if (position(s)?.first !== first) return null;
          // A capture can land mid-redraw (the title drawn, the rows not yet):
          // wait for a whole frame of the right rows, not only the right title.
          return whole(s, width) ? s : null;
        },
        `the log from row ${first}; screen:\n${t!.capture()}`,
        20_000,
        50,
      );
    t.send('g');
    let at = check(await screenAt(1), 80);
    for (;;) {
      for (let r = at.first; r <= at.last; r++) seen.add(r);
      if (at.last === at.total) break;
      t.send('NPage');
      at = check(await screenAt(Math.min(at.first + 20, at.total - 19)), 80);
    }
    // Every row of the log was on screen at some page.
    expect(seen.size).toBe(end.total);

    // ── One row at a time: k is earlier, j later; G the end, g the top ───
    t.send('k');
    check(await screenAt(end.first - 1), 80);
    t.send('k');
    check(await screenAt(end.first - 2), 80);
    t.send('j');
    check(await screenAt(end.first - 1), 80);
    t.send('Up');
    check(await screenAt(end.first - 2), 80);
    t.send('Down');
    check(await screenAt(end.first - 1), 80);
    t.send('PPage');
    check(await screenAt(end.first - 21), 80);
    t.send('G');
    check(await screenAt(end.first), 80);
    // j at the end stays at the end; k then goes back one row at once.
    t.send('j');
    t.send('j');
    t.send('k');
    check(await screenAt(end.first - 1), 80);
    t.send('g');
    check(await screenAt(1), 80);

    // ── 160×45: j at the end overlaps no two lines ───────────────────────
    t.tmux('resize-window', '-t', 'main', '-x', '160', '-y', '45');
    t.send('G');
    const wide = await waitFor(
      () => {
        const s = t!.capture();
        const p = position(s);
        return s.split('\n').length >= 45 &&
          p &&
          p.last === p.total &&
          /rows \d+–\d+ of \d+/.test(s) &&
          whole(s, 160)
          ? s
          : null;
      },
      'the log at 160×45, at its end',
      20_000,
      50,
    );
    const big = check(wide, 160);
    t.send('j');
    t.send('k');
    check(await screenAt(big.first - 1, 160), 160);
    t.send('j');
    check(await screenAt(big.first, 160), 160);
  },
);
