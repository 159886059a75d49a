// JSON for a terminal: JSON.stringify escapes C0 control characters
// (ESC becomes \u001b) but writes DEL, the C1 controls (U+009B is a CSI to
// terminals that honour 8-bit controls), U+2028/U+2029, and the bidi controls
// and zero-width characters (sanitize.ts says what they do) as they are.
// Written as \uXXXX escapes they parse to the same value and never reach the
// terminal.

import { redact, redactDeep, RULES_TEXT } from './redact.js';

const RAW = /[\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
const RAW_ALL = new RegExp(RAW.source, 'g');

const u = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** JSON text (from JSON.stringify or the store) with no raw control character left. */
export function escapeJsonText(text: string): string {
  return RAW.test(text) ? text.replace(RAW_ALL, u) : text;
}

/** JSON.stringify whose output is safe to print on a terminal. */
export function terminalJson(value: unknown, indent?: number): string {
  return escapeJsonText(JSON.stringify(value, null, indent));
}

/** JSON's string escapes. */
const ESCAPE = /\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])/g;
/** An escaped quote, backslash or slash as itself; a control (\n, \u001b, …) as a space, which separates words as it does. */
const unescaped = (m: string) =>
  m.length === 2 && (m[1] === '"' || m[1] === '\\' || m[1] === '/') ? m[1]! : ' ';

/**
 * JSON text (as the store writes it) with every secret in its strings
 * redacted. Redacting the text itself could cut an escape in half and would
 * miss a secret behind one (`\nsk-proj-…`: no word boundary after the n),
 * so the escapes are undone for a check first: every string then stands in
 * it as it is (controls as spaces: the store escapes nothing else), between
 * quotes, so no secret can hide from redact(). Only text
 * where one may be is parsed and redacted value by value (a long listing of
 * ordinary jobs is not parsed at all).
 */
export function redactJsonText(text: string): string {
  const decoded = text.replace(ESCAPE, unescaped);
  if (redact(decoded) === decoded) return text;
  return JSON.stringify(redactDeep(JSON.parse(text) as unknown));
}

/** JSON text as `ii job list --json` prints it: secrets redacted, no raw control character. */
export function shownJsonText(text: string): string {
  return escapeJsonText(redactJsonText(text));
}

/**
 * Whether shownJsonText(text) is `text` itself: nothing to redact in it, no
 * control to escape. The store asks this of each listing text as it writes
 * it (state/sqlite/job-json.ts) and keeps the answer with SHOWN_RULES, so a
 * listing of texts found clean copies them as stored, without scanning 5 MB
 * again on every call; a text with no answer, or one reached under other
 * rules, goes through shownJsonText.
 */
export function shownAsIs(text: string): boolean {
  if (RAW.test(text)) return false;
  const decoded = text.replace(ESCAPE, unescaped);
  return redact(decoded) === decoded;
}

/** The rules shownAsIs answers by: redaction's patterns and the escapes here. */
export const SHOWN_RULES_TEXT = [RULES_TEXT, RAW, ESCAPE].join('\n');

/**
 * The version of SHOWN_RULES_TEXT, kept with each verdict: one reached
 * under other rules is not trusted. A change to the rules, or to what
 * shownJsonText does, bumps it; test/unit/list-shown.test.ts holds the rules'
 * hash at this version and fails until it is bumped. (Hashing the rules at
 * each start instead cost ii job list 2 ms, or node:crypto's 5 to load.)
 */
export const SHOWN_RULES = 1;
