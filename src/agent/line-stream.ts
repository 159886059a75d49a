// The stdio side of an ACP connection, ours rather than the SDK's ndJsonStream
// so that every line is seen first: recorded in the transcript as written, a
// non-JSON line skipped with a warning instead of breaking the stream, an
// oversized one ending the session, and session/update notifications handled
// here in arrival order (the SDK may run notification handlers concurrently).
// Until the first JSON-RPC message, though, output that is not one means the
// command is not an ACP agent at all (a banner, a usage text, a prompt): that
// ends the session at once, instead of waiting out the start timeout.
import type { Readable, Writable } from 'node:stream';
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import type { TranscriptRecorder } from './transcript-recorder.js';
import { quotedOutput } from './quoted-output.js';

import { isObj, type Obj } from '../model/obj.js';

export interface LineStreamHooks {
  /** A session/update notification's params; not passed on to the SDK. */
  onUpdate(params: Obj): void;
  /** A response carrying a stopReason (usage may ride on it, beyond the stable schema). */
  onPromptResult?(result: Obj): void;
  onWarning(message: string): void;
  /** The agent broke the stream for good (oversized message). */
  onFatal(message: string): void;
  /** The agent's first output is not JSON-RPC (`output`, from its first non-blank character). */
  onNotAcp(output: string): void;
}

const isRpc = (m: unknown) => isObj(m) && m.jsonrpc === '2.0';

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
    // The SDK's close() cancels its reader: the stream is closed from that
    // side, and a line the agent wrote as it was stopped (its answer to the
    // cancelled prompt) comes after. Enqueued, it would throw in a 'data'
    // handler, an uncaught exception that ended ii (exit 1) before the job's
    // end was recorded.
    cancel() {
      closed = true;
    },
  });

  /** A JSON-RPC message has arrived: from now on a bad line is skipped, not fatal. */
  let spoken = false;
  /** The first non-blank character of the output has been seen (and was a `{`). */
  let begun = false;

  const handleLine = (line: string) => {
    if (!line.trim()) return;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      if (!spoken) return notAcp(line.trimStart());
      const w = `the agent wrote a line that is not JSON; skipped: ${quotedOutput(line)}`;
      recorder.warning(w);
      hooks.onWarning(w);
      return;
    }
    if (!spoken) {
      if (!isRpc(msg)) return notAcp(line.trimStart());
      spoken = true;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      const w = `the agent wrote JSON that is not a JSON-RPC message; skipped: ${quotedOutput(line)}`;
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
    if (!begun) {
      // Known from the first character, even when no newline ever comes.
      const first = chunk.search(/\S/);
      if (first !== -1) {
        begun = true;
        if (chunk[first] !== '{') return notAcp(chunk.slice(first));
      }
    }
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
      if (dead) return;
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
  function notAcp(output: string) {
    dead = true;
    pending = [];
    hooks.onNotAcp(output);
    closeReadable();
  }
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
