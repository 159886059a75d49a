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
// A byte of a file name (or a diff) that was not UTF-8 reaches here as a lone
// surrogate (bytes.ts) and is shown as that byte, `\xff`, so two names that
// differ only there never look the same; any other lone surrogate, which a
// terminal would draw as U+FFFD, is escaped too.
//
// They are shown, not dropped: each becomes the escape a C or JavaScript
// string literal would use (`\x1b`, `\r`, `\u009b`, `\u2028`), so `ESC[2J`
// reads `\x1b[2J` and the reader sees that something odd was printed. The
// rest of the sequence (`[2J`) is ordinary text once its ESC is gone. `\xNN`
// is an ASCII control or, from 80 up, a raw byte; `\uNNNN` is a character
// (the C1 CSI is `\u009b`, a byte 0x9b that was not UTF-8 is `\x9b`).
//
// Applied where text is printed or rendered (the CLI's formatters, the
// dashboard's views), never where it is stored: the records keep what the
// agent wrote.

/** C0 but tab and newline, CR, DEL, C1, the two Unicode line separators, bidi controls and zero-width characters. */
const TEXT_CONTROLS = String.raw`\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff`;
/** The same plus tab and newline: a name or a one-line field shows every control character. */
const LINE_CONTROLS = String.raw`\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff`;
/** The controls, and surrogates: a pair is matched whole (and kept), a lone one (a byte that was not UTF-8) alone. */
const matcher = (controls: string) =>
  new RegExp(String.raw`[${controls}]|[\ud800-\udbff][\udc00-\udfff]?|[\udc00-\udfff]`, 'g');

const IN_TEXT = new RegExp(`[${TEXT_CONTROLS}]`);
const IN_TEXT_ALL = matcher(TEXT_CONTROLS);
const IN_LINE = new RegExp(`[${LINE_CONTROLS}]`);
const IN_LINE_ALL = matcher(LINE_CONTROLS);
// The first test: a control or any surrogate. Most text has neither, and one
// regex is as fast as the controls alone were (isWellFormed() on every line
// made drawing a third slower); a surrogate there is mostly an emoji's pair.
const MAY_TEXT = new RegExp(`[${TEXT_CONTROLS}\\ud800-\\udfff]`);
const MAY_LINE = new RegExp(`[${LINE_CONTROLS}\\ud800-\\udfff]`);

/** Whether visibleText (with `may`/`sure`: visibleLine) has anything to escape in `s`. */
const escapes = (s: string, may = MAY_TEXT, sure = IN_TEXT): boolean =>
  may.test(s) && (sure.test(s) || !s.isWellFormed());

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** The visible form of one control character: `\n`, `\r`, `\t`, else `\xNN` (ASCII, or a byte that was not UTF-8) or `\uNNNN`. */
export function escapeControl(c: string): string {
  const short = SHORT[c];
  if (short) return short;
  const code = c.charCodeAt(0);
  if (code < 0x80) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code >= 0xdc80 && code <= 0xdcff) return `\\x${(code - 0xdc00).toString(16)}`;
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Whether `s` holds a character visibleText() would change. */
export const hasControl = (s: string): boolean => escapes(s);

/**
 * Multi-line text as it may be shown on a terminal: newlines and tabs stay,
 * every other control character is escaped. A CR that ends a line (CRLF
 * output, a progress bar's last redraw) is dropped: it moves nothing there.
 */
export function visibleText(s: string): string {
  // The fast path: almost all text has nothing to escape, and the dashboard
  // calls this for every line it draws.
  if (!escapes(s)) return s;
  return s.replace(IN_TEXT_ALL, (c, at: number) =>
    c.length === 2 ? c : c === '\r' && (at + 1 === s.length || s[at + 1] === '\n') ? '' : escapeControl(c),
  );
}

/** One line (a file name, a title, a cell): newlines and tabs are escaped too, so it stays one line. */
export function visibleLine(s: string): string {
  if (!escapes(s, MAY_LINE, IN_LINE)) return s;
  return s.replace(IN_LINE_ALL, (c) => (c.length === 2 ? c : escapeControl(c)));
}

const LONE_ALL = /[\ud800-\udbff][\udc00-\udfff]?|[\udc00-\udfff]/g;

/**
 * Only the lone surrogates (bytes that were not UTF-8, bytes.ts) escaped, as
 * `\xff`: for text written to a UTF-8 file, which cannot hold them and would
 * get U+FFFD. Control characters stay: where the file is shown escapes them.
 */
export function visibleBytes(s: string): string {
  return s.isWellFormed() ? s : s.replace(LONE_ALL, (c) => (c.length === 2 ? c : escapeControl(c)));
}
