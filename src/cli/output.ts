// Output that goes nowhere: `ii job logs | head` closes the pipe (EPIPE), a
// closed terminal fails every write (EIO). Node reports that as an 'error'
// event on process.stdout/stderr, which, unhandled, ends the process with a
// stack trace: a read command then dies noisily, and a runner dies without
// ending its job. Lost output is never a reason to fail: a read command stops
// quietly (exit 0, there is nobody left to read), and a command that owns a
// job (keepRunning) runs on with its output dropped.

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

/** Installs the handlers on stdout and stderr (once, at start). */
export function guardOutput(): void {
  process.stdout.on('error', handle);
  process.stderr.on('error', handle);
}

/**
 * From now on a closed stdout or stderr does not end the process: `lostOutput`
 * is called once (e.g. to note it in the job's event log) and the command goes on.
 */
export function keepRunningWithoutOutput(lostOutput?: () => void): void {
  keepRunning = true;
  onLost = lostOutput ?? null;
}
