// JSON for a terminal: JSON.stringify escapes C0 control characters
// (ESC becomes \u001b) but writes DEL, the C1 controls (U+009B is a CSI to
// terminals that honour 8-bit controls) and U+2028/U+2029 as they are. Written
// as \uXXXX escapes they parse to the same value and never reach the terminal.

const RAW = /[\x7f-\x9f\u2028\u2029]/;
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
