// Appends every ACP message of one agent session to a JSONL file, both ways,
// plus warnings about what had to be skipped. Lines are
//   {"t":<ms>,"dir":"in"|"out","message":<JSON-RPC message>}
//   {"t":<ms>,"type":"warning","message":"<text>"}
// which src/job/transcript-text.ts renders. Writes are batched (one append per
// tick) so a chatty agent costs little, and flushed synchronously on close.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export class TranscriptRecorder {
  private buf: string[] = [];
  private scheduled = false;
  private failed: string | null = null;

  constructor(
    readonly path: string,
    /** Told once, when a write fails (a full disk ends the job). */
    private readonly onError?: (err: Error) => void,
  ) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
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

  /** Why writing failed, if it did (reported once by the session). */
  get error(): string | null {
    return this.failed;
  }

  flush(): void {
    this.scheduled = false;
    if (this.buf.length === 0 || this.failed) return;
    const text = this.buf.join('\n') + '\n';
    this.buf = [];
    try {
      appendFileSync(this.path, text, { mode: 0o600 });
    } catch (err) {
      this.failed = `cannot write transcript ${this.path}: ${(err as Error).message}`;
      this.onError?.(err as Error);
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
