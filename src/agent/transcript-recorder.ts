// Appends every ACP message of one agent session to a JSONL file, both ways,
// plus warnings about what had to be skipped. Lines are
//   {"t":<ms>,"dir":"in"|"out","message":<JSON-RPC message>}
//   {"t":<ms>,"type":"warning","message":"<text>"}
//   {"t":<ms>,"type":"stderr","message":"<a line the agent wrote on stderr>"}
// which src/job-log/transcript-text.ts renders. Writes are batched (one append per
// tick) so a chatty agent costs little, and flushed synchronously on close.
//
// A turn's part of the file is capped ([agent] transcript-max-mb): an agent
// that floods (200,000 updates in a turn wrote 65 MB) keeps its turn's first
// half of the cap and its last part, and in between one marker line
//   {"t":<ms>,"type":"warning","message":"<what was dropped>","dropped":{"messages":n,"bytes":n}}
// Past the head, lines are appended as usual; when they pass the other half,
// the oldest of them are dropped in place: the newest quarter of the cap is
// read back, written after the head with the marker before it, and the file
// truncated there. The file never passes the cap between flushes, and it
// keeps one inode, so a live reader sees a shorter file and starts over.
import {
  appendFileSync,
  closeSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { TranscriptSink } from '../state/log-shipper.js';
import { grouped } from '../text/grouped.js';

/** The default cap of one turn's transcript: 32 MiB ([agent] transcript-max-mb). */
export const DEFAULT_TRANSCRIPT_MAX_BYTES = 32 * 2 ** 20;

/** Room kept for the marker line within the cap. */
const MARKER_ROOM = 1024;
/** What a compaction moves at a time. */
const COPY_CHUNK = 1 << 20;

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 1)} MB`;

export class TranscriptRecorder {
  private buf: string[] = [];
  private scheduled = false;
  private failed: string | null = null;
  /** The file's size as written here (this recorder is its only writer). */
  private size: number;
  /** Bytes of the current turn's head written so far. */
  private headBytes = 0;
  /** Where the turn's head ends once it is full (the marker's place), else null. */
  private headEnd: number | null = null;
  /** The marker line's length in the file (0 until something is dropped). */
  private markerBytes = 0;
  /** Lines after the marker (or the head): what a compaction may drop. */
  private tailLines = 0;
  private readonly dropped = { messages: 0, bytes: 0 };

  constructor(
    readonly path: string,
    /** Most bytes one turn may take in the file (default DEFAULT_TRANSCRIPT_MAX_BYTES). */
    readonly maxTurnBytes = DEFAULT_TRANSCRIPT_MAX_BYTES,
    /** Told once, when a write fails (a full disk ends the job). */
    private readonly onError?: (err: Error) => void,
    /** The shared store's copy (state/log-shipper.ts): each batch written, and the turns. */
    private readonly sink?: TranscriptSink,
  ) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      this.size = statSync(path).size;
    } catch {
      this.size = 0;
    }
  }

  /** The first half of the cap: the turn's opening (the prompt, the agent's start). */
  private get headMax(): number {
    return Math.floor(this.maxTurnBytes / 2);
  }

  /** The rest, less the marker's room: the most the turn's last part may take. */
  private get tailMax(): number {
    return Math.max(0, this.maxTurnBytes - this.headMax - MARKER_ROOM);
  }

  /** A new prompt turn: the cap counts from here (the lines so far are flushed first). */
  beginTurn(): void {
    this.flush();
    this.sink?.beginTurn();
    this.headBytes = 0;
    this.headEnd = null;
    this.markerBytes = 0;
    this.tailLines = 0;
    this.dropped.messages = 0;
    this.dropped.bytes = 0;
  }

  /** An incoming message, given as the raw line the agent wrote (already known to be JSON). */
  inRaw(line: string): void {
    this.push(`{"t":${Date.now()},"dir":"in","message":${line}}`);
  }

  out(message: unknown): void {
    this.push(`{"t":${Date.now()},"dir":"out","message":${JSON.stringify(message)}}`);
  }

  warning(message: string): void {
    this.push(JSON.stringify({ t: Date.now(), type: 'warning', message }));
  }

  /** One line the agent wrote on stderr (its own log: a model it cannot reach, a crash). */
  stderr(line: string): void {
    this.push(JSON.stringify({ t: Date.now(), type: 'stderr', message: line }));
  }

  /** Why writing failed, if it did (reported once by the session). */
  get error(): string | null {
    return this.failed;
  }

  flush(): void {
    this.scheduled = false;
    if (this.buf.length === 0 || this.failed) return;
    const lines = this.buf;
    this.buf = [];
    const data = Buffer.from(lines.join('\n') + '\n');
    if (this.headEnd === null && this.headBytes + data.length > this.headMax) {
      // The batch crosses the end of the head: find the first line past it.
      let bytes = 0;
      for (const [i, line] of lines.entries()) {
        const n = Buffer.byteLength(line) + 1;
        if (this.headBytes + n > this.headMax) {
          // The first line past the head starts the turn's last part, for good.
          this.headEnd = this.size + bytes;
          this.tailLines += lines.length - i;
          break;
        }
        this.headBytes += n;
        bytes += n;
      }
    } else if (this.headEnd === null) this.headBytes += data.length;
    else this.tailLines += lines.length;
    try {
      appendFileSync(this.path, data, { mode: 0o600 });
      this.sink?.lines(lines);
      this.size += data.length;
      if (this.headEnd !== null && this.size - this.headEnd - this.markerBytes > this.tailMax) this.compact();
    } catch (err) {
      this.failed = `cannot write transcript ${this.path}: ${(err as Error).message}`;
      this.onError?.(err as Error);
    }
  }

  /** The session closed: what is waiting is written, and the store's copy gets the turn's held end. */
  end(): void {
    this.flush();
    this.sink?.end();
  }

  /**
   * Drops the oldest lines of the turn's last part: keeps the whole lines in
   * its newest half (a quarter of the cap), with the marker before them. The
   * kept lines move a chunk at a time (reading them whole held 16 MB more at
   * each compaction of a 32 MB cap), always to an earlier place than where
   * they are read from, so each is read before anything is written over it.
   */
  private compact(): void {
    const headEnd = this.headEnd!;
    const from = headEnd + this.markerBytes;
    const fd = openSync(this.path, 'r+');
    try {
      const end = fstatSync(fd).size;
      const buf = Buffer.allocUnsafe(COPY_CHUNK);
      const read = (pos: number) =>
        buf.subarray(0, readSync(fd, buf, 0, Math.min(COPY_CHUNK, end - pos), pos));
      // From the byte before the kept bytes: when it is a newline, the first kept line is whole.
      let src = Math.max(from, end - Math.floor(this.tailMax / 2) - 1);
      if (src > from) {
        let at = end;
        for (let pos = src; pos < end;) {
          const got = read(pos);
          if (got.length === 0) break;
          const nl = got.indexOf(0x0a);
          if (nl >= 0) {
            at = pos + nl + 1;
            break;
          }
          pos += got.length;
        }
        src = at;
      }
      let kept = 0;
      for (let pos = src; pos < end;) {
        const got = read(pos);
        if (got.length === 0) break;
        for (let i = got.indexOf(0x0a); i !== -1; i = got.indexOf(0x0a, i + 1)) kept++;
        pos += got.length;
      }
      this.dropped.messages += this.tailLines - kept;
      this.dropped.bytes += src - from;
      this.tailLines = kept;
      const { messages, bytes } = this.dropped;
      const marker = Buffer.from(
        JSON.stringify({
          t: Date.now(),
          type: 'warning',
          message:
            `${grouped(messages)} message${messages === 1 ? '' : 's'} (${mb(bytes)}) of this turn dropped here: ` +
            `its transcript passed [agent] transcript-max-mb (${mb(this.maxTurnBytes)}), so its first ${mb(this.headMax)} ` +
            `and its last part are kept`,
          dropped: { messages, bytes },
        }) + '\n',
      );
      let dest = headEnd + marker.length;
      if (dest > src) {
        // A cap too small for the marker to fit before what is kept: what is kept is smaller still, so read it whole.
        const rest = Buffer.alloc(end - src);
        readSync(fd, rest, 0, rest.length, src);
        writeSync(fd, marker, 0, marker.length, headEnd);
        writeSync(fd, rest, 0, rest.length, dest);
        dest += rest.length;
      } else {
        writeSync(fd, marker, 0, marker.length, headEnd);
        for (let pos = src; pos < end;) {
          const got = read(pos);
          if (got.length === 0) break;
          writeSync(fd, got, 0, got.length, dest);
          dest += got.length;
          pos += got.length;
        }
      }
      ftruncateSync(fd, dest);
      this.markerBytes = marker.length;
      this.size = dest;
    } finally {
      closeSync(fd);
    }
  }

  private push(line: string): void {
    this.buf.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }
}
