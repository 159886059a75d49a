// A database URL as it may be shown: its password (in the user-info part or
// a `password=` parameter) replaced by [REDACTED]. The PostgreSQL driver names
// its store by this form in every message, and scrubs the password from any
// error text its client library produces (`scrubSecret`), so the password
// never reaches output, logs or `ii doctor`.
import { REDACTED } from './redact.js';

/** `url` with its password redacted; text that is not a URL has everything between :// and @ redacted. */
export function redactDbUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url.replace(/(:\/\/)[^/?#]*@/, `$1${REDACTED}@`);
  }
  if (u.password) u.password = REDACTED;
  for (const key of [...u.searchParams.keys()])
    if (/^(password|passwd|sslpassword)$/i.test(key)) u.searchParams.set(key, REDACTED);
  // URL encodes the brackets of the placeholder: show them as typed.
  return u.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED);
}

/** The password a database URL holds (decoded), or null. */
export function dbUrlPassword(url: string): string | null {
  try {
    const u = new URL(url);
    const pw = u.password ? decodeURIComponent(u.password) : u.searchParams.get('password');
    return pw || null;
  } catch {
    const m = /:\/\/[^:/@]*:([^@/]*)@/.exec(url);
    return m?.[1] ? m[1] : null;
  }
}

/**
 * `text` with `url` shown redacted and its password, raw or percent-encoded,
 * replaced wherever else it appears (an error message quoting a parameter).
 */
export function scrubDbUrl(text: string, url: string): string {
  let out = text.replaceAll(url, redactDbUrl(url));
  const pw = dbUrlPassword(url);
  if (pw) {
    for (const form of new Set([pw, encodeURIComponent(pw)]))
      if (form.length > 0) out = out.replaceAll(form, REDACTED);
  }
  return out;
}
