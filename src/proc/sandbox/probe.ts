// Whether bubblewrap can run here: installed, and allowed to make a user
// namespace (some kernels and containers forbid it). Probed once per
// process with a real sandboxed `true`, and remembered.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export type SandboxProbe =
  { ok: true; bwrap: string; disableUserns: boolean } | { ok: false; reason: string; fix: string };

const INSTALL = 'apt install bubblewrap';

export function onPath(cmd: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, cmd);
    try {
      if (statSync(p).isFile()) {
        accessSync(p, constants.X_OK);
        return p;
      }
    } catch {}
  }
  return null;
}

const BASE = [
  '--unshare-user',
  '--unshare-pid',
  '--die-with-parent',
  '--cap-drop',
  'ALL',
  '--ro-bind',
  '/',
  '/',
];
const cache = new Map<string, SandboxProbe>();

function tryRun(bwrap: string, extra: string[]): { ok: boolean; err: string } {
  const r = spawnSync(bwrap, [...BASE, ...extra, '--proc', '/proc', '--dev', '/dev', 'true'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 10_000,
    encoding: 'utf8',
  });
  return { ok: r.status === 0, err: (r.stderr ?? r.error?.message ?? '').trim() };
}

/** Whether a job can be sandboxed here, and if not why and the fix. */
export function probeSandbox(env: NodeJS.ProcessEnv = process.env): SandboxProbe {
  if (process.platform !== 'linux')
    return {
      ok: false,
      reason: `no sandbox on ${process.platform} yet`,
      fix: 'run on Linux with bubblewrap, or set [sandbox] mode = "off"',
    };
  const bwrap = onPath('bwrap', env);
  if (!bwrap) return { ok: false, reason: 'bubblewrap not installed', fix: INSTALL };
  const known = cache.get(bwrap);
  if (known) return known;
  let result: SandboxProbe;
  if (tryRun(bwrap, ['--disable-userns']).ok) result = { ok: true, bwrap, disableUserns: true };
  else {
    const plain = tryRun(bwrap, []);
    result = plain.ok
      ? { ok: true, bwrap, disableUserns: false }
      : {
          ok: false,
          reason: `bubblewrap cannot make a sandbox here (${plain.err.split('\n')[0] || 'it failed'})`,
          fix: 'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor bwrap profile on Ubuntu)',
        };
  }
  // Only a sandbox that works is kept: a runner that comes back for job
  // after job (cli/job/do.ts standby) lives as long as ii run, and a person
  // who fixes what failed must not need to restart it.
  if (result.ok) cache.set(bwrap, result);
  return result;
}
