// The one JSON-lines reader: event logs, notes and agent transcripts are all
// append-only files of one JSON value a line, written by other processes that
// may die mid-line. A line that is not JSON, or not what the schema says, is
// reported as skipped (with its number and why) and never trusted; the
// callers decide whether that is worth a warning.
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import type { ZodType } from 'zod';

export type JsonLine<T> =
  { n: number; raw: string; ok: true; value: T } | { n: number; raw: string; ok: false; error: string };

export interface Skipped {
  /** 1-based line number in the file. */
  n: number;
  error: string;
}

/** The values and the skipped lines of a parse. */
export interface JsonLines<T> {
  values: T[];
  skipped: Skipped[];
}

/** Parses one line: JSON first, then the schema when there is one. */
function parseLine<T>(raw: string, n: number, schema?: ZodType<T>): JsonLine<T> {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return { n, raw, ok: false, error: 'not JSON (a torn or garbled line)' };
  }
  if (!schema) return { n, raw, ok: true, value: v as T };
  const r = schema.safeParse(v);
  if (r.success) return { n, raw, ok: true, value: r.data };
  const issue = r.error.issues[0];
  const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
  return { n, raw, ok: false, error: `${issue?.message ?? 'invalid'}${where}` };
}

/** Every non-blank line of `text`, parsed; `firstLine` numbers the first one. */
export function parseJsonLines<T = unknown>(text: string, schema?: ZodType<T>, firstLine = 1): JsonLine<T>[] {
  const out: JsonLine<T>[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim()) out.push(parseLine(raw, firstLine + i, schema));
  });
  return out;
}

/** Splits parsed lines into values and skipped lines. */
export function partition<T>(lines: JsonLine<T>[]): JsonLines<T> {
  const values: T[] = [];
  const skipped: Skipped[] = [];
  for (const l of lines) {
    if (l.ok) values.push(l.value);
    else skipped.push({ n: l.n, error: l.error });
  }
  return { values, skipped };
}

/**
 * A whole file's lines, parsed; null when the file does not exist. Any other
 * read error is thrown: a file that is there but unreadable is not empty.
 */
export function readJsonLines<T = unknown>(path: string, schema?: ZodType<T>): JsonLine<T>[] | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return parseJsonLines(text, schema);
}

/** What jsonLineValues reads at a time. */
const READ_CHUNK = 1 << 20;

/**
 * The values of a file's JSON lines, parsed one at a time as the file is
 * read a MiB at a time (a line that is not JSON is skipped): a whole
 * transcript (32 MB at its cap) parsed into one array first, to be rendered
 * once, peaked at ~290 MB. What reading throws (ENOENT too) is thrown as it
 * is iterated.
 */
export function* jsonLineValues(path: string): Generator<unknown, void, undefined> {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(READ_CHUNK);
    /** The start of a line longer than what was read so far. */
    let pieces: Buffer[] = [];
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0;) {
      const got = buf.subarray(0, n);
      const cut = got.lastIndexOf(0x0a);
      if (cut < 0) {
        pieces.push(Buffer.from(got));
        continue;
      }
      // Made a string before the next read reuses buf.
      const text = (
        pieces.length ? Buffer.concat([...pieces, got.subarray(0, cut)]) : got.subarray(0, cut)
      ).toString('utf8');
      pieces = cut + 1 < n ? [Buffer.from(got.subarray(cut + 1))] : [];
      yield* valuesOf(text);
    }
    if (pieces.length) yield* valuesOf(Buffer.concat(pieces).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

function* valuesOf(text: string): Generator<unknown, void, undefined> {
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      continue;
    }
    yield v;
  }
}

/** "3 lines of <path> are not valid and were skipped (line 4: not JSON …)". */
export function skippedWarning(path: string, skipped: Skipped[], what = 'valid'): string | null {
  if (skipped.length === 0) return null;
  const first = skipped[0]!;
  const n = skipped.length;
  return `${n} line${n === 1 ? '' : 's'} of ${path} ${n === 1 ? 'is' : 'are'} not ${what} and ${n === 1 ? 'was' : 'were'} skipped (line ${first.n}: ${first.error})`;
}

export interface TailOptions {
  /**
   * Reads only about the last this many bytes of the file the first time
   * (from the first whole line in them), and skips ahead the same way
   * whenever more than this was appended since the last read: a live view of
   * a long transcript needs its end, not a parse of every line the agent
   * ever streamed (an agent flooding 400,000 updates wrote ~100 MB in
   * seconds, read in chunks of tens of MB).
   */
  lastBytes?: number;
}

/** How many of the last bytes read are checked again before the next read. */
const SEEN_BYTES = 64;

/**
 * Reads what was appended to a file since the last read, a whole line at a
 * time (a writer's half-written last line waits for the next read), so a
 * live view reads only what changed, never a whole log again.
 */
export class JsonLinesTail<T = unknown> {
  private offset = 0;
  /** The bytes after the last newline read: a line still being written (kept as bytes, so a character split across reads stays whole). */
  private rest: Buffer = Buffer.alloc(0);
  /** Lines consumed so far, so skipped lines are numbered as in the file (counted from the first line read when the start was skipped). */
  private lineNo = 0;
  /** True while the bytes before the first newline are the tail of a line cut off by lastBytes. */
  private dropping = false;
  private started = false;
  /** The last bytes read (up to SEEN_BYTES, ending at offset): still there unchanged unless the file was rewritten. */
  private seen: Buffer = Buffer.alloc(0);
  /**
   * Times the reader started over (the file shrank or was rewritten in place:
   * truncated, replaced, or a capped transcript dropping its middle) or
   * skipped ahead (lastBytes): when it changes, the lines read before do not
   * run on into the next ones.
   */
  breaks = 0;
  constructor(
    readonly path: string,
    private readonly schema?: ZodType<T>,
    private readonly o: TailOptions = {},
  ) {}

  /** New complete lines since the previous call; [] when the file is missing or unchanged. */
  read(): JsonLine<T>[] {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return [];
    }
    try {
      const size = fstatSync(fd).size;
      if (size < this.offset || !this.unchangedBefore(fd)) {
        // Truncated, replaced or rewritten: start over.
        this.offset = 0;
        this.rest = Buffer.alloc(0);
        this.seen = Buffer.alloc(0);
        this.lineNo = 0;
        this.dropping = false;
        this.started = false;
        this.breaks++;
      }
      const last = this.o.lastBytes;
      if (!this.started) {
        this.started = true;
        if (last !== undefined && size > last) {
          // From the byte before the last ones: when that is a newline, the
          // first line kept is whole and only the newline is dropped.
          this.offset = size - last - 1;
          this.dropping = true;
        }
      } else if (last !== undefined && size - this.offset > last + 1) {
        // Far behind the writer: only the end is worth reading (numbering goes on from the last line read).
        this.offset = size - last - 1;
        this.rest = Buffer.alloc(0);
        this.dropping = true;
        this.breaks++;
      }
      if (size === this.offset) return [];
      const buf = Buffer.alloc(size - this.offset);
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      this.offset += n;
      this.seen = Buffer.from(
        (n >= SEEN_BYTES ? buf.subarray(0, n) : Buffer.concat([this.seen, buf.subarray(0, n)])).subarray(
          -SEEN_BYTES,
        ),
      );
      let bytes = this.rest.length ? Buffer.concat([this.rest, buf.subarray(0, n)]) : buf.subarray(0, n);
      if (this.dropping) {
        const nl = bytes.indexOf(0x0a);
        if (nl < 0) {
          this.rest = Buffer.alloc(0);
          return [];
        }
        this.dropping = false;
        bytes = bytes.subarray(nl + 1);
      }
      const cut = bytes.lastIndexOf(0x0a);
      this.rest = Buffer.from(bytes.subarray(cut + 1));
      if (cut < 0) return [];
      const whole = bytes.subarray(0, cut).toString('utf8');
      const first = this.lineNo + 1;
      this.lineNo += whole.split('\n').length;
      return parseJsonLines(whole, this.schema, first);
    } finally {
      closeSync(fd);
    }
  }

  /** Whether the bytes just before the offset are still those read last (a shrink-and-regrow leaves the size no guide). */
  private unchangedBefore(fd: number): boolean {
    const len = this.seen.length;
    if (len === 0 || this.offset < len) return true;
    const now = Buffer.alloc(len);
    return readSync(fd, now, 0, len, this.offset - len) === len && now.equals(this.seen);
  }
}
