// The tail of a failing command's output, small enough for a journal, cut as
// the journal-v2 spec's getErrorExcerpt cuts it (Fixes Applied 6): the last
// EXCERPT_LINES lines, then, when those are over EXCERPT_BYTES, their first
// EXCERPT_BYTES bytes and TRUNCATED_MARK. The spec's code cuts with
// substring, which counts UTF-16 code units; ours counts UTF-8 bytes as its
// MAX_BYTES says, and cuts on a character boundary. Secrets are redacted
// before anything is cut, so a key split by the cut cannot leak half of
// itself. The whole output stays in the event log (log_path).
import { redact } from '../text/redact.js';

export const EXCERPT_LINES = 60;
export const EXCERPT_BYTES = 5 * 1024;
/** What the spec appends to an excerpt cut at EXCERPT_BYTES. */
export const TRUNCATED_MARK = '\n\n[Excerpt truncated to 5KB]';

/** The first `max` bytes of `s` as UTF-8, never ending inside a character. */
function headBytes(s: string, max: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= max) return s;
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--; // buf[end] continues a character: back to its start
  return buf.subarray(0, end).toString('utf8');
}

/** The redacted excerpt of `text`: its last lines, capped in bytes with the spec's mark. */
export function excerpt(text: string, maxLines = EXCERPT_LINES, maxBytes = EXCERPT_BYTES): string {
  // The output's final newline ends its last line; it is not a line of its own.
  const clean = redact(text).replace(/\n+$/, '');
  const tail = clean === '' ? '' : clean.split('\n').slice(-maxLines).join('\n');
  if (Buffer.byteLength(tail, 'utf8') <= maxBytes) return tail;
  return headBytes(tail, maxBytes) + TRUNCATED_MARK;
}
