// A database URL as it may be shown: its password (in the user-info part or
// a `password=` parameter) replaced by [REDACTED]. The PostgreSQL driver names
// its store by this form in every message, and scrubs the password from any
// error text its client library produces (`scrubSecret`), so the password
// never reaches output, logs or `ii doctor`.
//
// A password typed with a raw `/`, `?` or `#` (a generated one often has a
// `/`) ends a URL's authority early: the URL parser then refuses the text, or
// reads the start of the password as a port and the rest as the path. Either
// way the password is all of what lies between the user's `:` and the last
// `@`, and that is what is redacted.
import { REDACTED } from './redact.js';

/** scheme://user:rest@… with `rest` running to the last `@`: the password of a URL the parser misreads. */
const RAW_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^:/?#@]*)(?::(.*))?@/is;

/** The URL as the parser reads it, or null when it does not, or misreads a raw `/` in a password as the path's. */
function parsed(url: string): URL | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  // postgres://ii:12/ab@host/db: user "", host "ii", port 12, path "/ab@host/db"
  // (with 12?ab, 12#ab or 12/ab?cd the rest is in the query or the fragment).
  // A raw @ there in a real URL's query cannot be told from that: the URL is
  // then redacted past it, rather than a password shown (%40 is read as is).
  const rest = `${u.pathname}${u.search}${u.hash}`.includes('@');
  if (!u.username && !u.password && rest && RAW_USERINFO.test(url)) return null;
  return u;
}

/** `url` with its password redacted; text that is not a URL has everything between :// and the last @ redacted. */
export function redactDbUrl(url: string): string {
  const u = parsed(url);
  if (!u) return url.replace(/(:\/\/)[^@]*@/s, `$1${REDACTED}@`);
  if (u.password) u.password = REDACTED;
  for (const key of [...u.searchParams.keys()])
    if (/^(password|passwd|sslpassword)$/i.test(key)) u.searchParams.set(key, REDACTED);
  // URL encodes the brackets of the placeholder: show them as typed.
  return u.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED);
}

/** The password a database URL holds (decoded), or null. */
export function dbUrlPassword(url: string): string | null {
  const u = parsed(url);
  if (u) {
    const pw = u.password ? safeDecode(u.password) : u.searchParams.get('password');
    return pw || null;
  }
  return RAW_USERINFO.exec(url)?.[3] || null;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
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

/**
 * `text` (a TOML parser's error, quoting the config line) with the user-info
 * part of every URL in it redacted, up to the last `@` of the token: the
 * line may hold the store's URL, unquoted, its password with a raw `/`.
 */
export function scrubUrlUserinfo(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s"'`]*@/gi, `$1${REDACTED}@`);
}
