// The `l` log as a pager (src/dashboard/view/log-view.ts): a log's lines cut
// into rows of the pane's width in terminal cells, none dropped, none wider
// than the pane; and the pager keys through the real store and reducer.
import { afterAll, describe, expect, it } from 'vitest';
import { entryRows, logWindow } from '../../src/dashboard/view/log-view.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { openStateStore } from '../../src/state/index.js';
import { cellWidth, expandTabs, hardWrap } from '../../src/text/cells.js';
import { makeJob, REPO } from '../helpers/dash-fixture.js';
import { tempDir } from '../helpers/tmp.js';

describe('rows', () => {
  it('counts wide characters as two cells and never puts one across the edge', () => {
    expect(cellWidth('日本')).toBe(4);
    expect(cellWidth('🎉')).toBe(2);
    expect(hardWrap('ab日本語', 5)).toEqual(['ab日', '本語']);
    expect(hardWrap('x'.repeat(12), 5)).toEqual(['xxxxx', 'xxxxx', 'xx']);
    for (const r of hardWrap('日本語テキスト and 🎉 emoji 🎉🎉 mixed', 7))
      expect(cellWidth(r)).toBeLessThanOrEqual(7);
  });

  it('keeps grapheme clusters whole: flags, skin tones, joined emoji, combining marks', () => {
    for (const c of ['🇯🇵', '👍🏽', '👨‍👩‍👧', '1️⃣', 'e\u0301', '각']) {
      const line = `${'a'.repeat(9)}${c}b${c.repeat(12)}`;
      for (const width of [3, 10, 11]) {
        const rows = hardWrap(line, width);
        expect(rows.join('')).toBe(line);
        for (const r of rows) expect(cellWidth(r)).toBeLessThanOrEqual(width);
        // No cluster split across rows: every row's clusters are whole ones of the line.
        for (const r of rows) expect(r.replace(/a|b/g, '').split(c).join('')).toBe('');
      }
    }
    expect(hardWrap(`${'a'.repeat(9)}🇯🇵`, 10)).toEqual(['a'.repeat(9), '🇯🇵']);
  });

  it('expands tabs to the stops a terminal uses', () => {
    expect(expandTabs('a\tb')).toBe(`a${' '.repeat(7)}b`);
    expect(expandTabs('日\tb')).toBe(`日${' '.repeat(6)}b`);
  });

  it('splits an entry at its newlines, keeps blank lines and escapes controls', () => {
    expect(entryRows('one\ntwo\n\nfour', 80)).toEqual(['one', 'two', '', 'four']);
    expect(entryRows('\x1b[2J gone?', 80)).toEqual(['\\x1b[2J gone?']);
    expect(entryRows('', 80)).toEqual(['']);
  });

  it('a window is the rows of every line in order, from its top, at any height', () => {
    const lines = ['first', 'a\nmulti-line\n\nentry', 'x'.repeat(25), '日本語'.repeat(5), '', 'last'];
    const all = lines.flatMap((l) => entryRows(l, 10));
    expect(all).toHaveLength(1 + 4 + 3 + 3 + 1 + 1);
    for (let h = 1; h <= all.length + 2; h++)
      for (let top = 0; top < all.length; top++) {
        const w = logWindow(lines, 10, h, top, false);
        expect(w.total).toBe(all.length);
        expect(w.rows).toEqual(all.slice(w.top, w.top + h));
        expect(w.top).toBe(Math.min(top, Math.max(0, all.length - h)));
      }
    expect(logWindow(lines, 10, 4, 0, true).rows).toEqual(all.slice(-4));
  });
});

describe('pager keys', () => {
  const tmp = tempDir('ii-logview-');
  const state = openStateStore({ dir: tmp.path });
  afterAll(() => {
    state.close();
    tmp.cleanup();
  });

  function logOpen(lines: string[], height: number) {
    const job = makeJob(state, { finish: 'failed' });
    const dash = createDashboardStore({ repo: REPO, repoLabel: REPO, color: false, jobs: [job] });
    dash.getState().setRecord(job.id, { log: lines, tests: [] });
    dash.getState().setLogSize(20, height);
    dash.getState().dispatch({ type: 'overlay', overlay: 'logs' });
    const at = () => {
      const s = dash.getState();
      return logWindow(lines, s.logSize.width, height, s.nav.scroll, s.nav.follow).top;
    };
    const key = (to: 'up' | 'down' | 'pageUp' | 'pageDown' | 'top' | 'end') =>
      dash.getState().dispatch({ type: 'logScroll', to });
    return { dash, at, key };
  }

  it('opens at the end; k goes up a row, j down, g to the top, G to the end, pages by the height', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    const { dash, at, key } = logOpen(lines, 10);
    expect(at()).toBe(20);
    key('up');
    expect(at()).toBe(19);
    expect(dash.getState().nav.follow).toBe(false);
    key('down');
    expect(at()).toBe(20);
    expect(dash.getState().nav.follow).toBe(true);
    // j at the end stays there: no presses banked that k must undo.
    key('down');
    key('down');
    key('up');
    expect(at()).toBe(19);
    key('top');
    expect(at()).toBe(0);
    key('up');
    expect(at()).toBe(0);
    key('pageDown');
    expect(at()).toBe(10);
    key('pageDown');
    key('pageDown');
    expect(at()).toBe(20);
    key('pageUp');
    expect(at()).toBe(10);
    key('end');
    expect(at()).toBe(20);
    expect(dash.getState().nav.follow).toBe(true);
  });

  it('counts rows as drawn: a wrapped line is several rows to scroll over', () => {
    // 20 cells wide: the long line takes 3 rows, the two-line entry 2.
    const lines = ['a', 'y'.repeat(45), 'b\nc', 'd'];
    const { at, key } = logOpen(lines, 3);
    expect(at()).toBe(4); // 7 rows, 3 shown
    key('top');
    key('down');
    expect(at()).toBe(1);
  });
});
