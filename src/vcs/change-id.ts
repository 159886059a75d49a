// Gerrit-style change ids: `Change-Id: I<40 hex>` as the last trailer of a
// commit message. The id names the change, not a commit, so it survives
// amends, rewrites and describe.
import { randomBytes } from 'node:crypto';

export const CHANGE_ID_RE = /^I[0-9a-f]{40}$/;

export const newChangeId = (): string => `I${randomBytes(20).toString('hex')}`;

const TRAILER_LINE = /^Change-Id:[ \t]*(\S*)[ \t]*$/;
const ANY_TRAILER = /^[A-Za-z0-9][A-Za-z0-9-]*:[ \t]/;

/** The message with exactly one Change-Id trailer, `id`, in its last paragraph. */
export function withChangeId(message: string, id: string): string {
  const kept = message
    .replace(/\r\n/g, '\n')
    .split('\n')
    .filter((l) => !TRAILER_LINE.test(l))
    .join('\n')
    .trim();
  const body = kept || 'incrementum change';
  const paragraphs = body.split(/\n\s*\n/);
  const last = paragraphs.at(-1)!.split('\n');
  // Append to an existing trailer block (Signed-off-by: ...) rather than
  // starting a new paragraph, as git interpret-trailers would.
  const trailerBlock = paragraphs.length > 1 && last.every((l) => ANY_TRAILER.test(l));
  return `${body}${trailerBlock ? '\n' : '\n\n'}Change-Id: ${id}\n`;
}

/** The change id in a commit message's trailers, or null. */
export function readChangeId(message: string): string | null {
  let found: string | null = null;
  for (const line of message.split('\n')) {
    const m = TRAILER_LINE.exec(line);
    if (m && CHANGE_ID_RE.test(m[1]!)) found = m[1]!;
  }
  return found;
}
