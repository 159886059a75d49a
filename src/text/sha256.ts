// SHA-256 in JavaScript, for the short text hashed on every command's start
// (a repository's slug, state/paths.ts): loading node:crypto for it cost
// ii job list 5 ms of its start, far more than hashing a path takes here.
// Anything long or hot uses node:crypto. Checked against node:crypto in test/unit/sha256.test.ts.

/** The first 32 bits of the fractional parts of the square (initial hash) and cube (round constants) roots of the first primes. */
const PRIMES: number[] = [];
for (let n = 2; PRIMES.length < 64; n++) if (PRIMES.every((p) => n % p !== 0)) PRIMES.push(n);
const frac = (x: number) => ((x - Math.floor(x)) * 0x100000000) >>> 0;
const H0 = PRIMES.slice(0, 8).map((p) => frac(Math.sqrt(p)));
const K = PRIMES.map((p) => frac(Math.cbrt(p)));

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** The SHA-256 of `text`'s UTF-8 bytes, in lower-case hex. */
export function sha256Hex(text: string): string {
  const bytes = new TextEncoder().encode(text);
  const len = bytes.length;
  const words = (((len + 8) >> 6) + 1) * 16;
  const w = new Uint32Array(words);
  for (let i = 0; i < len; i++) w[i >> 2]! |= bytes[i]! << (24 - (i & 3) * 8);
  w[len >> 2]! |= 0x80 << (24 - (len & 3) * 8);
  w[words - 2] = Math.floor(len / 0x20000000);
  w[words - 1] = (len * 8) >>> 0;
  const h = H0.slice();
  const m = new Uint32Array(64);
  for (let b = 0; b < words; b += 16) {
    for (let t = 0; t < 16; t++) m[t] = w[b + t]!;
    for (let t = 16; t < 64; t++) {
      const x = m[t - 15]!;
      const y = m[t - 2]!;
      const s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3);
      const s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10);
      m[t] = (m[t - 16]! + s0 + m[t - 7]! + s1) | 0;
    }
    let [a, bb, c, d, e, f, g, hh] = h as [number, number, number, number, number, number, number, number];
    for (let t = 0; t < 64; t++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t]! + m[t]!) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) | 0;
    }
    const out = [a, bb, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i++) h[i] = (h[i]! + out[i]!) | 0;
  }
  return h.map((x) => (x >>> 0).toString(16).padStart(8, '0')).join('');
}
