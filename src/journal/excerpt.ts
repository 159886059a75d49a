// The tail of a failing command's output, small enough for a journal: the
// last EXCERPT_LINES lines, at most EXCERPT_BYTES bytes (marker included),
// secrets redacted before anything is cut so a key split by the cut cannot
// leak half of itself.
import { redact } from '../text/redact.js';

export const EXCERPT_LINES = 60;
export const EXCERPT_BYTES = 5 * 1024;

const size = (s: string): number => Buffer.byteLength(s, 'utf8');

function marker(lines: number, bytes: number): string {
  const parts = [];
  if (lines > 0) parts.push(`${lines} earlier line${lines === 1 ? '' : 's'}`);
  if (bytes > 0) parts.push(`${bytes} bytes of the first line shown`);
  return `[… truncated: ${parts.join(' and ')} not shown; the full output is in the log]\n`;
}

/** The redacted tail of `text`, with a truncation marker on top when anything was cut. */
export function excerpt(text: string, maxLines = EXCERPT_LINES, maxBytes = EXCERPT_BYTES): string {
  const clean = redact(text).replace(/\n+$/, '');
  const lines = clean === '' ? [] : clean.split('\n');
  let kept = lines.slice(-maxLines);
  let droppedLines = lines.length - kept.length;
  if (droppedLines === 0 && size(kept.join('\n')) <= maxBytes) return kept.join('\n');
  // Drop whole lines from the front until the marker and the rest fit...
  let bytes = kept.reduce((n, l) => n + size(l) + 1, -1);
  while (kept.length > 1 && size(marker(droppedLines, 0)) + bytes > maxBytes) {
    bytes -= size(kept[0]!) + 1;
    kept = kept.slice(1);
    droppedLines++;
  }
  const body = kept.join('\n');
  if (size(marker(droppedLines, 0)) + size(body) <= maxBytes) return marker(droppedLines, 0) + body;
  // ...then cut the one long line left from its front, on a character boundary.
  const buf = Buffer.from(body, 'utf8');
  const budget = maxBytes - size(marker(droppedLines, buf.length)); // the widest marker it can need
  let start = Math.max(0, buf.length - Math.max(0, budget));
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++; // not inside a UTF-8 sequence
  return marker(droppedLines, start) + buf.subarray(start).toString('utf8');
}
