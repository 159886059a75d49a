// A git remote's URL in the one form every clone of the repository shares,
// whichever way each clone spelled it: scp-style (git@host:a/b.git), ssh://,
// https:// with or without credentials, a trailing .git or slash, the host in
// any case. Credentials and ports are dropped (never kept, never shown): the
// same repository is reached over ssh on one machine and https on another.
import { isAbsolute, resolve } from 'node:path';

/**
 * `host/path` for a network remote, `file:/abs/path` for a local one (relative
 * to `root` when relative), or null when `url` is empty.
 */
export function normaliseRemoteUrl(url: string, root = '/'): string | null {
  const u = url.trim();
  if (!u) return null;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(u);
  if (scheme) {
    const proto = scheme[1]!.toLowerCase();
    if (proto === 'file') return `file:${tidyPath(decodeURIComponent(u.slice('file://'.length)))}`;
    // Past the scheme: [user[:password]@]host[:port]/path. The last @ before
    // the path ends the credentials (a password may hold an @ of its own).
    const rest = u.slice(scheme[0].length);
    const slash = rest.indexOf('/');
    const authority = slash < 0 ? rest : rest.slice(0, slash);
    const path = slash < 0 ? '' : rest.slice(slash);
    const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
    const host = hostPort.startsWith('[')
      ? hostPort.slice(0, hostPort.indexOf(']') + 1)
      : hostPort.replace(/:\d*$/, '');
    return join(host.toLowerCase(), tidyPath(path));
  }
  // scp-style: [user@]host:path, where the host has no slash before the colon.
  const scp = /^(?:[^@/]+@)?(\[[^\]]+\]|[^:/]+):(.*)$/.exec(u);
  if (scp && !/^[A-Za-z]:[\\/]/.test(u)) return join(scp[1]!.toLowerCase(), tidyPath(scp[2]!));
  return `file:${tidyPath(isAbsolute(u) ? u : resolve(root, u))}`;
}

/** The path without a trailing .git, trailing or doubled slashes, or a leading slash (kept for local paths). */
function tidyPath(p: string): string {
  let out = p.replace(/\/+/g, '/').replace(/\/+$/, '');
  out = out.replace(/\.git$/, '').replace(/\/+$/, '');
  return out;
}

function join(host: string, path: string): string {
  const p = path.replace(/^\/+/, '');
  // ssh's ~user paths and / paths name the same repository on one host.
  return p ? `${host}/${p.replace(/^~\//, '')}` : host;
}
