// Bytes that are not UTF-8 (a file name an agent wrote, a Latin-1 file) keep
// their identity through decoding, JSON and display, where U+FFFD made
// different names look the same.
import { describe, expect, it } from 'vitest';
import { decodeBytes } from '../../src/text/bytes.js';
import { terminalJson } from '../../src/text/json.js';
import { visibleBytes, visibleLine, visibleText } from '../../src/text/sanitize.js';

const bytes = (...b: number[]) => Buffer.from(b);
const ascii = (s: string) => [...Buffer.from(s, 'latin1')];

describe('decodeBytes', () => {
  it('decodes valid UTF-8 as toString does, a real U+FFFD included', () => {
    for (const s of ['plain', 'ünïcode ✓ 日本語 😀', 'a\ufffdb', '', '\x00\x7f'])
      expect(decodeBytes(Buffer.from(s, 'utf8'))).toBe(s);
  });

  it('keeps each byte that is not UTF-8 as U+DC80 + byte, the valid text around it as is', () => {
    expect(decodeBytes(bytes(...ascii('bad-'), 0xff, ...ascii('.txt')))).toBe('bad-\udcff.txt');
    expect(decodeBytes(bytes(...ascii('bad-'), 0xfe, ...ascii('.txt')))).toBe('bad-\udcfe.txt');
    // Latin-1 é, then a valid é: only the byte that is not UTF-8 is kept apart.
    expect(decodeBytes(bytes(0x63, 0x61, 0x66, 0xe9, 0x20, 0xc3, 0xa9))).toBe('caf\udce9 é');
    // A sequence cut short, an overlong form, an encoded surrogate, past U+10FFFF: each byte on its own.
    expect(decodeBytes(bytes(0xe2, 0x9c))).toBe('\udce2\udc9c');
    expect(decodeBytes(bytes(0xc0, 0xaf))).toBe('\udcc0\udcaf');
    expect(decodeBytes(bytes(0xed, 0xa0, 0x80))).toBe('\udced\udca0\udc80');
    expect(decodeBytes(bytes(0xf4, 0x90, 0x80, 0x80))).toBe('\udcf4\udc90\udc80\udc80');
    expect(decodeBytes(bytes(0xe2, 0x9c, 0x93, 0x80))).toBe('✓\udc80');
  });
});

describe('a byte that is not UTF-8, shown', () => {
  const ff = decodeBytes(bytes(...ascii('bad-'), 0xff, ...ascii('.txt')));
  const fe = decodeBytes(bytes(...ascii('bad-'), 0xfe, ...ascii('.txt')));

  it('reads as the byte, \\xff, so two names differing there never look the same', () => {
    expect(visibleLine(ff)).toBe('bad-\\xff.txt');
    expect(visibleText(fe)).toBe('bad-\\xfe.txt');
    expect(visibleLine(ff)).not.toBe(visibleLine(fe));
    // A byte 0x9b and the C1 CSI character U+009B are two things, shown as two.
    expect(visibleLine(decodeBytes(bytes(0x9b)))).toBe('\\x9b');
    expect(visibleLine('\u009b')).toBe('\\u009b');
    // ÿ is a letter, shown as itself.
    expect(visibleLine('bad-ÿ.txt')).toBe('bad-ÿ.txt');
  });

  it('keeps surrogate pairs (emoji) and escapes any lone surrogate', () => {
    expect(visibleText('ok 😀 👨‍👩‍👧'.replaceAll('\u200d', ''))).toBe('ok 😀 👨👩👧');
    expect(visibleLine('a\ud800b')).toBe('a\\ud800b');
    expect(visibleLine('a\udc00b')).toBe('a\\udc00b');
    expect(visibleLine('\ud83d')).toBe('\\ud83d');
    expect(visibleLine('😀\ude00')).toBe('😀\\ude00');
  });

  it('written to a file (the journal), keeps its byte as \\xff and leaves the rest for display to escape', () => {
    expect(visibleBytes(`| ${ff} | 😀 \x1b[2J |`)).toBe('| bad-\\xff.txt | 😀 \x1b[2J |');
    const plain = 'nothing to do ✓';
    expect(visibleBytes(plain)).toBe(plain);
  });

  it('is a \\u escape in JSON that parses back to the same name', () => {
    const json = terminalJson({ path: ff });
    expect(json).toBe('{"path":"bad-\\udcff.txt"}');
    expect((JSON.parse(json) as { path: string }).path).toBe(ff);
    expect(JSON.parse(terminalJson({ path: fe }))).not.toEqual(JSON.parse(json));
  });
});
