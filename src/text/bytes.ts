// Git's output is bytes: file names (in lists and in a diff's headers) and file
// contents are whatever an agent wrote, UTF-8 or not. Decoded as UTF-8 the
// usual way, every byte that is not part of valid UTF-8 becomes U+FFFD, so
// `bad-\xff.txt` and `bad-\xfe.txt` both read `bad-�.txt`: two files, one name.
//
// Here each such byte is kept as the lone surrogate U+DC80 + byte instead
// (Python's "surrogateescape"). No valid text holds a lone surrogate, so the
// name stays itself: JSON.stringify writes it as `\udcff` (which parses back
// to the same string), and sanitize.ts shows it as the byte, `\xff`.

/** The length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there starts none. */
function sequenceAt(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (j: number, lo = 0x80, hi = 0xbf) => i + j < b.length && b[i + j]! >= lo && b[i + j]! <= hi;
  // The well-formed sequences (Unicode 15, table 3-7): no overlong form, no surrogate, nothing past U+10FFFF.
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (c === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c >= 0xe1 && c <= 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/** UTF-8 bytes as text, each byte that is not valid UTF-8 kept as the lone surrogate U+DC80 + byte. */
export function decodeBytes(b: Uint8Array): string {
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const fast = buf.toString('utf8');
  // Almost all output is valid UTF-8: a U+FFFD in the result is the only sign it may not be.
  if (!fast.includes('\ufffd')) return fast;
  let out = '';
  let run = 0;
  for (let i = 0; i < buf.length;) {
    const n = sequenceAt(buf, i);
    if (n > 0) {
      i += n;
      continue;
    }
    out += buf.toString('utf8', run, i) + String.fromCharCode(0xdc00 + buf[i]!);
    run = ++i;
  }
  return out + buf.toString('utf8', run);
}
