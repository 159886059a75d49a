// Hostile text for the display tests: the control sequences an agent or a test
// could print to take over a terminal, secrets in the shapes redact() knows,
// and the near misses that must be shown as they are.
import { expect } from 'vitest';

// Built by concatenation so the fixtures never look like live keys to a scanner.
const k = (...parts: string[]) => parts.join('');

/**
 * Clears the screen; sets the window title (OSC ... BEL); a C1 CSI (U+009B); a bell; a CR that rewrites the line;
 * a right-to-left override that makes `inv\u202etxt.exe` read `invexe.txt`; zero-width characters (space, joiner, BOM)
 * and an isolate that draw nothing.
 */
export const CONTROLS = {
  clear: '\x1b[2J',
  title: '\x1b]0;pwned-title\x07',
  c1: '\x9b31m',
  bell: '\x07',
  cr: 'ok\rFORGED',
  bidi: 'inv\u202etxt.exe',
  invisible: 'zero\u200bwidth\u200d\ufeff\u2066iso',
} as const;

/** All of CONTROLS in one line of text. */
export const HOSTILE = `hostile ${CONTROLS.clear}${CONTROLS.title} c1 ${CONTROLS.c1} bell${CONTROLS.bell} ${CONTROLS.cr} ${CONTROLS.bidi} ${CONTROLS.invisible}`;

/** How HOSTILE's escape sequences read once shown: the ESC of `ESC[2J` as `\x1b`. */
export const SHOWN_CLEAR = '\\x1b[2J';
/** How CONTROLS.bidi reads once shown, and in JSON: the override as its escape. */
export const SHOWN_BIDI = 'inv\\u202etxt.exe';
/** How CONTROLS.invisible reads once shown, and in JSON. */
export const SHOWN_INVISIBLE = 'zero\\u200bwidth\\u200d\\ufeff\\u2066iso';

/** Secrets, each with a part that must never be shown. */
export const SECRETS: { text: string; leak: string }[] = [
  {
    text: k('sk-ant-', 'api03-', 'abcdefghijklmnopqrstuvwx_yz-0123456789'),
    leak: 'abcdefghijklmnopqrstuvwx',
  },
  { text: k('ghp_', 'Abcdefghijklmnopqrstuvwxyz0123456789'), leak: 'Abcdefghijklmnopqrstu' },
  { text: k('npm_', 'ZyxwvutsrqponmlkjihgfedcbA0123456789'), leak: 'Zyxwvutsrqponml' },
  { text: k('glpat-', 'GitLabTokenValue12345'), leak: 'GitLabTokenValue' },
  {
    text: k('eyJhbGciOiJIUzI1NiJ9', '.', 'eyJzdWIiOiJ1c2VyMTIzIn0', '.', 'c2lnbmF0dXJlc2lnbmF0dXJl'),
    leak: 'c2lnbmF0dXJl',
  },
  { text: k('MY_API_KEY=', 'plainvalue42'), leak: 'plainvalue42' },
  { text: k('aws_secret_access_key = ', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'), leak: 'wJalrXUtnFEMI' },
];

/** All secrets, one a line. */
export const SECRET_TEXT = SECRETS.map((s) => s.text).join('\n');

/** Text that looks a little like a secret and must be shown untouched. */
export const NEAR_MISSES = [
  'const token = getToken()',
  'tokenizer=bert-base',
  '123e4567-e89b-12d3-a456-426614174000',
];

// eslint-disable-next-line no-control-regex -- what must never reach a terminal
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ufffd]/;

/**
 * Fails, naming where and showing the spot, when `text` holds a raw control character (tab and newline allowed),
 * bidi control or zero-width character, or U+FFFD (a byte that was not UTF-8, lost: no fixture holds a real one).
 */
export function expectNoControl(text: string, where: string): void {
  const m = RAW_CONTROL.exec(text);
  const around = m ? JSON.stringify(text.slice(Math.max(0, m.index - 40), m.index + 40)) : '';
  expect(
    m ? `${where}: raw U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')} in ${around}` : null,
  ).toBeNull();
}

/** Fails when `text` shows any secret of SECRETS. */
export function expectNoSecret(text: string, where: string): void {
  const leaked = SECRETS.filter((s) => text.includes(s.leak)).map((s) => s.leak);
  expect(leaked, `${where} shows secrets`).toEqual([]);
}
