// How a command's error ends the process: its line on stderr and the exit
// code. Apart from main.ts so the entry's fast path (start.ts), which loads
// no commander, ends the same way.
import { asDiskFull, UserError } from '../errors.js';
import { visibleText } from '../text/sanitize.js';

/** Exit codes (documented in the README). */
export const EXIT = { ok: 0, failed: 1, usage: 2, internal: 3 } as const;

/** Reports `err` (anything but commander's own) on stderr; the exit code it ends with. */
export function reportError(err: unknown): number {
  if (err instanceof UserError) {
    // A message may quote a name or a line an agent wrote.
    process.stderr.write(`ii: ${visibleText(err.message)}\n`);
    return err.exitCode;
  }
  // ENOSPC met where nothing turned it into a UserError: still the clear message, no stack.
  const full = asDiskFull(err);
  if (full) {
    process.stderr.write(`ii: ${visibleText(full.message)}\n`);
    return full.exitCode;
  }
  process.stderr.write(
    `ii: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  return EXIT.internal;
}
