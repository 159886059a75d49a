// Output that goes nowhere: `ii job logs | head` closes the pipe (EPIPE), a
// closed terminal fails every write (EIO). Node reports that as an 'error'
// event on process.stdout/stderr, which, unhandled, ends the process with a
// stack trace: a read command then dies noisily, and a runner dies without
// ending its job. Lost output is never a reason to fail: a read command stops
// quietly (exit 0, there is nobody left to read), and a command that owns a
// job (keepRunning) runs on with its output dropped.

import { writeSync } from 'node:fs';

const LOST = new Set(['EPIPE', 'EIO', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

let keepRunning = false;
let onLost: (() => void) | null = null;
let lost = false;

function handle(err: NodeJS.ErrnoException): void {
  if (keepRunning) {
    // Whatever the write error (a closed reader, a full disk under a
    // redirect), the job matters more than its progress lines.
    if (!lost) {
      lost = true;
      try {
        onLost?.();
      } catch {} // noting it is a courtesy; the job goes on regardless
    }
    return;
  }
  if (LOST.has(err.code ?? '')) process.exit(process.exitCode ?? 0);
  try {
    process.stderr.write(`ii: cannot write the output: ${err.message}\n`);
  } catch {}
  process.exit(3);
}

let guarded = { stdout: false, stderr: false };

/** Installs the handlers on stdout and stderr (once, at start). */
export function guardOutput(): void {
  guardStdout();
  guardStderr();
}

/** guardOutput's handler on stdout alone (once; again is a no-op). */
export function guardStdout(): void {
  if (guarded.stdout) return;
  guarded = { ...guarded, stdout: true };
  process.stdout.on('error', handle);
}

/**
 * guardOutput's handler on stderr alone: for a command whose stdout is
 * written by stdoutBytes, which must not make process.stdout before it needs it.
 */
export function guardStderr(): void {
  if (guarded.stderr) return;
  guarded = { ...guarded, stderr: true };
  process.stderr.on('error', handle);
}

/**
 * guardStderr at the moment something first makes process.stderr (a
 * warning, an error, a line of the dead-runner cleanup), not before: made
 * at start, it cost ii job list 3 ms of a 30 ms start when stderr is a pipe
 * (net and the streams loaded for it), and most listings write nothing
 * there. Node's own getter makes it, and is put back.
 */
export function guardStderrWhenMade(): void {
  const made = Object.getOwnPropertyDescriptor(process, 'stderr');
  if (guarded.stderr || !made?.get || !made.configurable) return guardStderr();
  Object.defineProperty(process, 'stderr', {
    configurable: true,
    enumerable: made.enumerable ?? true,
    get() {
      Object.defineProperty(process, 'stderr', made);
      guardStderr();
      return process.stderr;
    },
  });
}

const BLOCK = 64 * 1024;

/**
 * A writer of bytes to fd 1 by write(2) itself, in blocks of 64 KiB, for a
 * large output (ii job list --json: 5 MB for 1,000 jobs). process.stdout
 * would make a stream whose pipe libuv turns non-blocking, so that each
 * block went through a queue and the event loop: on the listing of 1,000
 * jobs that cost as much CPU as reading it. Written this way, a pipe or
 * file left blocking (as a shell and spawn give it) takes each block at
 * once. One that is non-blocking (shared with a stderr Node has made, under
 * 2>&1) answers EAGAIN: what is left then goes through process.stdout.
 * A write error ends the process as guardOutput's handler does.
 */
export function stdoutBytes(): { put: (bytes: Uint8Array) => void; end: (bytes?: Uint8Array) => void } {
  let block = Buffer.allocUnsafe(BLOCK);
  let n = 0;
  let stream = false;
  const write = (b: Uint8Array) => {
    for (let o = 0; o < b.length && !stream;) {
      try {
        o += writeSync(1, b, o, b.length - o);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return handle(err as NodeJS.ErrnoException);
        stream = true;
        guardStdout();
        b = b.subarray(o);
      }
    }
    // process.stdout may keep the bytes queued: they are a copy, not the block written again.
    if (stream) process.stdout.write(Buffer.from(b));
  };
  const flush = () => {
    if (n) write(block.subarray(0, n));
    n = 0;
  };
  const put = (b: Uint8Array) => {
    if (n + b.length > BLOCK) {
      flush();
      if (b.length > BLOCK) return write(b);
    }
    block.set(b, n);
    n += b.length;
  };
  return {
    put,
    end: (b) => {
      if (b) put(b);
      flush();
      block = Buffer.alloc(0);
    },
  };
}

/**
 * From now on a closed stdout or stderr does not end the process: `lostOutput`
 * is called once (e.g. to note it in the job's event log) and the command goes on.
 */
export function keepRunningWithoutOutput(lostOutput?: () => void): void {
  keepRunning = true;
  onLost = lostOutput ?? null;
}
