// The stdio side of an ACP connection, ours rather than the SDK's ndJsonStream
// so that every line is seen first: recorded in the transcript as written, a
// non-JSON line skipped with a warning instead of breaking the stream, an
// oversized one ending the session, and session/update notifications handled
// here in arrival order (the SDK may run notification handlers concurrently).
import type { Readable, Writable } from 'node:stream';
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import type { TranscriptRecorder } from './transcript-recorder.js';

type Obj = Record<string, unknown>;

export interface LineStreamHooks {
  /** A session/update notification's params; not passed on to the SDK. */
  onUpdate(params: Obj): void;
  /** A response carrying a stopReason (usage may ride on it, beyond the stable schema). */
  onPromptResult?(result: Obj): void;
  onWarning(message: string): void;
  /** The agent broke the stream for good (oversized message). */
  onFatal(message: string): void;
}

const preview = (s: string) => JSON.stringify(s.length > 120 ? s.slice(0, 120) + '…' : s);

export function lineStream(
  stdout: Readable,
  stdin: Writable,
  recorder: TranscriptRecorder,
  hooks: LineStreamHooks,
  maxMessageBytes: number,
): Stream {
  let controller!: ReadableStreamDefaultController<AnyMessage>;
  let closed = false;
  const closeReadable = () => {
    if (closed) return;
    closed = true;
    try {
      controller.close();
    } catch {}
  };
  const readable = new ReadableStream<AnyMessage>({
    start(c) {
      controller = c;
    },
  });

  const handleLine = (line: string) => {
    if (!line.trim()) return;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      const w = `the agent wrote a line that is not JSON; skipped: ${preview(line)}`;
      recorder.warning(w);
      hooks.onWarning(w);
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      const w = `the agent wrote JSON that is not a JSON-RPC message; skipped: ${preview(line)}`;
      recorder.warning(w);
      hooks.onWarning(w);
      return;
    }
    recorder.inRaw(line.trim());
    const m = msg as Obj;
    if (m.method === 'session/update' && !('id' in m)) {
      if (typeof m.params === 'object' && m.params !== null) hooks.onUpdate(m.params as Obj);
      return;
    }
    const result = m.result as Obj | undefined;
    if (result && typeof result === 'object' && typeof result.stopReason === 'string')
      hooks.onPromptResult?.(result);
    if (!closed) controller.enqueue(m as AnyMessage);
  };

  // Chunks are split on "\n" by hand: cheaper than a readline interface, and
  // the size of a partial line is known at every step.
  let pending: string[] = [];
  let pendingBytes = 0;
  let dead = false;
  stdout.setEncoding('utf8');
  stdout.on('data', (chunk: string) => {
    if (dead) return;
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
      let line = chunk.slice(start, nl);
      if (pending.length) {
        pending.push(line);
        line = pending.join('');
        pending = [];
        pendingBytes = 0;
      }
      start = nl + 1;
      if (line.length > maxMessageBytes) return tooLarge();
      handleLine(line);
    }
    if (start < chunk.length) {
      const rest = chunk.slice(start);
      pending.push(rest);
      pendingBytes += rest.length;
      if (pendingBytes > maxMessageBytes) return tooLarge();
    }
  });
  stdout.on('end', () => {
    if (!dead && pending.length) handleLine(pending.join(''));
    pending = [];
    closeReadable();
  });
  function tooLarge() {
    dead = true;
    pending = [];
    const msg = `the agent sent a message larger than ${maxMessageBytes} bytes`;
    recorder.warning(msg);
    hooks.onFatal(msg);
    closeReadable();
  }

  stdin.on('error', () => {}); // EPIPE once the agent is gone: the exit is reported instead
  const writable = new WritableStream<AnyMessage>({
    write(message) {
      recorder.out(message);
      if (stdin.destroyed || stdin.writableEnded) return;
      stdin.write(JSON.stringify(message) + '\n');
    },
  });
  return { readable, writable };
}
