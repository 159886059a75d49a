// Agent output quoted in an error or a warning: its first characters, on one
// line, secrets redacted and control characters escaped (src/text), so a
// terminal shows what the agent wrote instead of acting on it.
import { redact } from '../text/redact.js';
import { visibleLine } from '../text/sanitize.js';

/** The first `max` characters of `text`, in double quotes, safe to print. */
export function quotedOutput(text: string, max = 120): string {
  // Redacted before the cut: a secret cut short might no longer look like one.
  const chars = Array.from(redact(text.slice(0, 4 * max)));
  const cut = chars.length > max ? chars.slice(0, max).join('') + '…' : chars.join('');
  return `"${visibleLine(cut)}"`;
}
