import { describe, expect, it } from 'vitest';
import { escapeJsonText, terminalJson } from '../../src/text/json.js';
import { hasControl, visibleLine, visibleText } from '../../src/text/sanitize.js';

/** Every control character a terminal acts on: C0 but tab and newline, DEL and C1. */
const CONTROLS = [
  ...Array.from({ length: 0x20 }, (_, i) => i).filter((i) => i !== 0x09 && i !== 0x0a),
  0x7f,
  ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i),
].map((c) => String.fromCharCode(c));

// eslint-disable-next-line no-control-regex -- what must not be left
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** Bidi overrides, embeddings, isolates and marks, and the zero-width characters: they draw nothing but change what is seen. */
const INVISIBLE = [
  ...Array.from({ length: 5 }, (_, i) => 0x202a + i),
  ...Array.from({ length: 4 }, (_, i) => 0x2066 + i),
  ...Array.from({ length: 5 }, (_, i) => 0x200b + i),
  0x061c,
  0xfeff,
].map((c) => String.fromCharCode(c));
const RAW_INVISIBLE = new RegExp(`[${INVISIBLE.join('')}]`, 'u');

describe('visibleText', () => {
  it('shows the usual attacks as readable escapes', () => {
    expect(visibleText('\x1b[2Jgone')).toBe('\\x1b[2Jgone');
    expect(visibleText('\x1b]0;pwned\x07title')).toBe('\\x1b]0;pwned\\x07title');
    expect(visibleText('\x9b31mred')).toBe('\\u009b31mred');
    expect(visibleText('\x1bP+q\x1b\\dcs')).toBe('\\x1bP+q\\x1b\\dcs');
    expect(visibleText('ok\rFORGED')).toBe('ok\\rFORGED');
    expect(visibleText('bell\x07 del\x7f nul\x00')).toBe('bell\\x07 del\\x7f nul\\x00');
    expect(visibleText('line\u2028sep')).toBe('line\\u2028sep');
  });

  it('escapes every C0 (but tab and newline), DEL and C1 character', () => {
    for (const c of CONTROLS) {
      const out = visibleText(`a${c}b`);
      expect(out, `U+${c.charCodeAt(0).toString(16)}`).not.toMatch(RAW);
      expect(out).not.toBe(`a${c}b`);
    }
  });

  it('escapes bidi controls and zero-width characters, so a name reads as it is', () => {
    // An RLO turns `inv\u202etxt.exe` into what reads as `invexe.txt`.
    expect(visibleText('inv\u202etxt.exe')).toBe('inv\\u202etxt.exe');
    expect(visibleLine('a\u2066b\u2069c\u200bd\ufeffe\u200ff')).toBe(
      'a\\u2066b\\u2069c\\u200bd\\ufeffe\\u200ff',
    );
    for (const c of INVISIBLE) {
      const hex = c.charCodeAt(0).toString(16).padStart(4, '0');
      expect(visibleText(`a${c}b`), `U+${hex}`).toBe(`a\\u${hex}b`);
      expect(visibleLine(`a${c}b`), `U+${hex}`).toBe(`a\\u${hex}b`);
      expect(hasControl(c)).toBe(true);
    }
    // Their neighbours are ordinary text.
    for (const c of ['\u200a', '\u2010', '\u202f', '\u2065', '\u206a', '\ufefe'])
      expect(visibleText(`a${c}b`)).toBe(`a${c}b`);
  });

  it('keeps newlines and tabs, and drops the CR of a CRLF or at the very end', () => {
    expect(visibleText('a\tb\nc')).toBe('a\tb\nc');
    expect(visibleText('one\r\ntwo\r\n')).toBe('one\ntwo\n');
    expect(visibleText('last\r')).toBe('last');
  });

  it('returns the same string when there is nothing to escape (the fast path)', () => {
    const s = 'plain text, ünïcode ✓ 日本語\n\ttabbed';
    expect(visibleText(s)).toBe(s);
    expect(hasControl(s)).toBe(false);
    expect(hasControl('\x1b')).toBe(true);
  });
});

describe('visibleLine', () => {
  it('escapes newlines and tabs too, so a file name stays one line', () => {
    expect(visibleLine('evil\nname.txt')).toBe('evil\\nname.txt');
    expect(visibleLine('tab\there')).toBe('tab\\there');
    expect(visibleLine('cr\r\n')).toBe('cr\\r\\n');
    expect(visibleLine('src/ok.ts')).toBe('src/ok.ts');
  });
});

describe('terminal JSON', () => {
  it('writes no raw control character, and parses back to the same value', () => {
    const value = { text: CONTROLS.join('') + '\u2028\u2029 ok', n: 1 };
    for (const text of [terminalJson(value), terminalJson(value, 2)]) {
      expect(text).not.toMatch(RAW);
      expect(text).not.toMatch(/[\u2028\u2029]/);
      expect(JSON.parse(text)).toEqual(value);
    }
    // Nor a bidi control or a zero-width character: \u escapes, as for the other controls.
    const hidden = { name: `inv${INVISIBLE.join('')}txt.exe` };
    const json = terminalJson(hidden);
    expect(json).not.toMatch(RAW_INVISIBLE);
    expect(json).toContain('inv\\u202a\\u202b');
    expect(JSON.parse(json)).toEqual(hidden);
    expect(escapeJsonText(JSON.stringify('inv\u202etxt.exe'))).toBe('"inv\\u202etxt.exe"');
    // JSON.stringify alone leaves C1 and DEL raw: this is what escapeJsonText is for.
    expect(JSON.stringify('\x9b')).toBe('"\x9b"');
    expect(escapeJsonText(JSON.stringify('\x9b\x7f'))).toBe('"\\u009b\\u007f"');
  });
});
