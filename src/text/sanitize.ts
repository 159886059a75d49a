// Control characters from agents and tests never reach a terminal raw: an
// ESC starts a sequence that can clear the screen, move the cursor, change
// the window title (OSC) or talk to the terminal itself (DCS), a C1 CSI
// (U+009B) does the same without an ESC on terminals that honour 8-bit
// controls, a BEL rings, a lone CR rewrites the line it is on, so a review
// comment could hide what it says or forge what incrementum says.
//
// Bidi overrides, embeddings, isolates and marks (U+202A–202E, U+2066–2069,
// U+200E/200F, U+061C) and the zero-width characters (U+200B–200D, U+FEFF)
// draw nothing yet change what is seen: `inv\u202etxt.exe` displays as
// `invexe.txt`, a zero-width space makes two names that look the same differ.
// They are escaped like the controls.
//
// They are shown, not dropped: each becomes the escape a C or JavaScript
// string literal would use (`\x1b`, `\r`, `\x9b`, `\u2028`), so `ESC[2J`
// reads `\x1b[2J` and the reader sees that something odd was printed. The
// rest of the sequence (`[2J`) is ordinary text once its ESC is gone.
//
// Applied where text is printed or rendered (the CLI's formatters, the
// dashboard's views), never where it is stored: the records keep what the
// agent wrote.

/** C0 but tab and newline, CR, DEL, C1, the two Unicode line separators, bidi controls and zero-width characters. */
const IN_TEXT =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
const IN_TEXT_ALL = new RegExp(IN_TEXT.source, 'g');
/** The same plus tab and newline: a name or a one-line field shows every control character. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const IN_LINE = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
const IN_LINE_ALL = new RegExp(IN_LINE.source, 'g');

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** The visible form of one control character: `\n`, `\r`, `\t`, else `\xNN` or `\uNNNN`. */
export function escapeControl(c: string): string {
  const short = SHORT[c];
  if (short) return short;
  const code = c.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Whether `s` holds a character visibleText() would change. */
export const hasControl = (s: string): boolean => IN_TEXT.test(s);

/**
 * Multi-line text as it may be shown on a terminal: newlines and tabs stay,
 * every other control character is escaped. A CR that ends a line (CRLF
 * output, a progress bar's last redraw) is dropped: it moves nothing there.
 */
export function visibleText(s: string): string {
  // The fast path: almost all text has nothing to escape, and the dashboard
  // calls this for every line it draws.
  if (!IN_TEXT.test(s)) return s;
  return s.replace(IN_TEXT_ALL, (c, at: number) =>
    c === '\r' && (at + 1 === s.length || s[at + 1] === '\n') ? '' : escapeControl(c),
  );
}

/** One line (a file name, a title, a cell): newlines and tabs are escaped too, so it stays one line. */
export function visibleLine(s: string): string {
  if (!IN_LINE.test(s)) return s;
  return s.replace(IN_LINE_ALL, escapeControl);
}
