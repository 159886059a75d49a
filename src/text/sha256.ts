// SHA-256 in JavaScript, for the short text hashed on every command's start
// (a repository's slug, state/paths.ts): loading node:crypto for it cost
// ii job list 5 ms of its start, far more than hashing a path takes here.
// Anything long or hot uses node:crypto. Checked against node:crypto in test/unit/sha256.test.ts.

// The first 32 bits of the fractional parts of the square roots (initial
// hash) and cube roots (round constants) of the first 8 and 64 primes
// (FIPS 180-4, 5.3.3 and 4.2.2), written out: computed at load, the prime
// sieve alone was ~10,000 closure calls in the interpreter on every start.
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
const K = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
];

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
