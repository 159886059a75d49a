// Reads what was appended to a file since the last read, a whole line at a
// time (a writer's half-written last line waits for the next read). The
// dashboard reads only what changed, never a whole log again.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export class LineTail {
  private offset = 0;
  private rest = '';
  constructor(readonly path: string) {}

  /** New complete lines since the previous call; [] when the file is missing or unchanged. */
  read(): string[] {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return [];
    }
    try {
      const size = fstatSync(fd).size;
      if (size < this.offset) {
        // Truncated or replaced: start over.
        this.offset = 0;
        this.rest = '';
      }
      if (size === this.offset) return [];
      const buf = Buffer.alloc(size - this.offset);
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      this.offset += n;
      const text = this.rest + buf.subarray(0, n).toString('utf8');
      const lines = text.split('\n');
      this.rest = lines.pop() ?? '';
      return lines.filter((l) => l.length > 0);
    } finally {
      closeSync(fd);
    }
  }
}

/** Parses JSONL lines, skipping torn or garbled ones. */
export function parseLines(lines: string[]): unknown[] {
  const out: unknown[] = [];
  for (const l of lines) {
    try {
      out.push(JSON.parse(l));
    } catch {}
  }
  return out;
}
