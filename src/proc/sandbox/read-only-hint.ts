// Why sandboxed setup or tests failed, when the sandbox is the reason. Tools
// that write outside the workspace (nyc's spawn-wrap makes ~/.node-spawn-wrap-*,
// a cache in a dotfile, a report in the checkout) pass unsandboxed and fail
// inside with EROFS, and their output rarely says that a sandbox was
// involved: a newcomer on minimist saw only nyc's stack trace. The output is
// watched as it streams (an excerpt may have cut the line out), and the first
// read-only write is named with both ways out. The path comes from the
// tests' output, which an agent may have written: it is shown escaped and
// redacted, like the output itself.
import { redact } from '../../text/redact.js';
import { visibleLine } from '../../text/sanitize.js';

/** Patterns of a refused write: Node's and the C library's words for EROFS. */
const READ_ONLY = /EROFS|[Rr]ead-only file system/;
/** The path a Node error names (`mkdir '/x'`, `path: '/x'`) or a command's (`'/x': Read-only file system`, `/x: Read-only …`). */
const PATHS = [
  /EROFS[^'\n]*?'([^'\n]+)'/,
  /path: '([^'\n]+)'/,
  /'(\/[^'\n]+)': [Rr]ead-only file system/,
  /(?:^|\s)(\/[^\s:']+): [Rr]ead-only file system/m,
];
/** Enough of the previous chunk to match a line split across two writes. */
const CARRY = 512;

export class ReadOnlyWrites {
  private carry = '';
  private seen: { path: string | null } | null = null;

  add(text: string): void {
    if (this.seen?.path) return;
    const s = this.carry + text;
    this.carry = s.slice(-CARRY);
    if (!READ_ONLY.test(s)) return;
    const i = s.search(READ_ONLY);
    const around = s.slice(Math.max(0, i - 200), i + 400);
    let path: string | null = null;
    for (const re of PATHS) {
      const m = re.exec(around);
      if (m) {
        path = m[1]!;
        break;
      }
    }
    if (!this.seen || path) this.seen = { path };
  }

  /** The hint, or null when nothing was refused as read-only. */
  hint(): string | null {
    if (!this.seen) return null;
    const where = this.seen.path ? ` (${redact(visibleLine(this.seen.path))})` : '';
    return (
      `It tried to write outside the workspace${where}: setup and tests run in the job's sandbox, ` +
      'where only the workspace and a private /tmp can be written. Point the tool at the workspace or /tmp, ' +
      'or allow that folder with `[sandbox] writable = ["<folder>"]` in incrementum.toml, ' +
      'or run without the sandbox: `[sandbox] mode = "off"`.'
    );
  }
}
