// `[sandbox] network = { allow = [...] }`: what an entry means and whether a
// connection is allowed by the list. Pure, so the config schema checks an
// entry when the file is read, and the sandbox's proxy (src/proc/sandbox)
// decides each connection by the same rule.

export interface AllowEntry {
  /** Lower case, without IPv6 brackets; `*.example.com` matches its subdomains. */
  host: string;
  /** null: the web's ports, 443 and 80. */
  port: number | null;
  /**
   * A loopback address (127.x, localhost, ::1): forwarded into the
   * sandbox's own loopback at the same port, since a model server on the
   * host's loopback is reached without proxy support. It needs its port.
   */
  loopback: boolean;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1)$/;

/** The entry, or null when it is not a host name, `host:port`, `[v6]:port`, or a loopback entry without its port. */
export function parseAllowEntry(entry: string): AllowEntry | null {
  const m =
    /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/i.exec(entry) ??
    /^([a-z0-9*_][a-z0-9._*-]*)(?::(\d{1,5}))?$/i.exec(entry);
  if (!m) return null;
  const host = m[1]!.toLowerCase().replace(/\.$/, '');
  const port = m[2] !== undefined ? Number(m[2]) : null;
  if (port !== null && (port < 1 || port > 65535)) return null;
  if (host.includes('*') && !/^\*\.[^*]+$/.test(host)) return null;
  const loopback = LOOPBACK.test(host);
  if (loopback && port === null) return null;
  return { host, port, loopback };
}

export const ALLOW_ENTRY_HELP =
  'must be a host name ("api.anthropic.com", "*.example.com"), "host:port", or a loopback address with its port ("127.0.0.1:4000")';

/** Whether a connection to `host:port` (as a client named it: CONNECT's target, a URL's host) is allowed. */
export function allows(entries: readonly AllowEntry[], host: string, port: number): boolean {
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  return entries.some(
    (e) =>
      (e.port === null ? port === 443 || port === 80 : e.port === port) &&
      (e.host.startsWith('*.') ? h.endsWith(e.host.slice(1)) && h.length > e.host.length - 1 : h === e.host),
  );
}
