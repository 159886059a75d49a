// The same sandbox policy as a macOS `sandbox-exec` profile (SBPL). It is
// generated and unit-tested here but cannot run on Linux, so nothing starts
// it yet. Seatbelt has no mounts: a hidden path is denied reading, not shown
// empty; /tmp is writable, not private; and there is no PID namespace, so
// what a job leaves running is ended by incrementum's own process cleanup.
// In SBPL the last matching rule wins, which is why the policy's
// parents-first order carries over: a deeper path's rule comes later.
import { parseAllowEntry } from '../../model/net-allow.js';
import type { SandboxPolicy } from './policy.js';

/** An SBPL string literal. */
const str = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** `/tmp` and `/var` are links to `/private/...` on macOS, and rules match the resolved path. */
const paths = (p: string): string[] => (/^\/(tmp|var|etc)(\/|$)/.test(p) ? [p, `/private${p}`] : [p]);

const subpaths = (p: string) =>
  paths(p)
    .map((q) => `(subpath ${str(q)})`)
    .join(' ');

export function seatbeltProfile(policy: SandboxPolicy): string {
  const lines = [
    '(version 1)',
    '(allow default)',
    ';; Everything read-only but what the policy makes writable.',
    '(deny file-write*)',
    '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper") (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
  ];
  if (policy.network === 'none') lines.push('(deny network*)');
  else if (policy.network !== 'host') {
    // Seatbelt has no namespaces and no proxy runs yet: only the allowed
    // loopback ports are reachable (host names need the proxy).
    lines.push('(deny network*)', '(allow network-bind network-inbound (local ip "localhost:*"))');
    for (const e of policy.network.allow.map(parseAllowEntry))
      if (e?.loopback) lines.push(`(allow network-outbound (remote ip "localhost:${e.port}"))`);
  }
  for (const m of policy.mounts) {
    lines.push(`;; ${m.why}`);
    switch (m.access) {
      case 'rw':
      case 'tmpfs':
        lines.push(`(allow file-read* file-write* ${subpaths(m.path)})`);
        break;
      case 'ro':
        lines.push(`(allow file-read* ${subpaths(m.path)})`, `(deny file-write* ${subpaths(m.path)})`);
        break;
      case 'hidden':
        lines.push(`(deny file-read* file-write* ${subpaths(m.path)})`);
        break;
    }
  }
  return lines.join('\n') + '\n';
}
