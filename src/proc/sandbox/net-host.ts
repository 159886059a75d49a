// Outside half of a sandbox with `network = { allow = [...] }`, started by
// Sandbox.wrap in bwrap's place: it makes a socket folder, serves the
// filtering proxy and the loopback forwards there, runs bwrap with the
// folder bound in and net-guest.js as the command, and when bwrap ends
// removes the folder and ends with bwrap's status. One per sandboxed
// process, in that process's group: killing the group ends it too.
//
//   node net-host.js <HostSpec JSON> -- <command> [args...]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllowEntry, type AllowEntry } from '../../model/net-allow.js';
import { filteringProxy, tcpForward } from './net-proxy.js';
import { NET_DIR_INSIDE, NET_DIR_PREFIX, type GuestSpec, type HostSpec, netGuestScript } from './net-spec.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** True when this process leads its process group (read from /proc: node has no getpgrp). */
function leadsGroup(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === process.pid;
  } catch {
    return false;
  }
}

/** Folders left by a net-host that was SIGKILLed (it could not remove its own). */
function sweep(base: string): void {
  try {
    for (const name of readdirSync(base)) {
      const pid = Number(/^ii-net-(\d+)-/.exec(name)?.[1]);
      if (pid && pid !== process.pid && !alive(pid))
        rmSync(join(base, name), { recursive: true, force: true });
    }
  } catch {}
}

const listen = (s: Server, path: string) =>
  new Promise<void>((resolve, reject) => s.once('error', reject).listen(path, () => resolve()));

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const sep = argv.indexOf('--');
  if (sep !== 1 || argv.length < 3) throw new Error('usage: net-host.js <spec> -- <command> [args...]');
  const spec = JSON.parse(argv[0]!) as HostSpec;
  const command = argv.slice(2);
  const base = tmpdir();
  sweep(base);
  const dir = mkdtempSync(join(base, `${NET_DIR_PREFIX}${process.pid}-`));
  const servers: Server[] = [];
  const cleanup = () => {
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const entries = spec.allow.map(parseAllowEntry).filter((e): e is AllowEntry => e !== null);
    const proxy = filteringProxy(entries);
    servers.push(proxy);
    await listen(proxy, join(dir, 'proxy.sock'));
    const guest: GuestSpec = { proxy: `${NET_DIR_INSIDE}/proxy.sock`, forwards: [] };
    for (const [i, e] of entries.filter((x) => x.loopback).entries()) {
      const fwd = tcpForward(e.host, e.port!);
      servers.push(fwd);
      await listen(fwd, join(dir, `port-${i}.sock`));
      guest.forwards.push({ host: e.host, port: e.port!, socket: `${NET_DIR_INSIDE}/port-${i}.sock` });
    }
    const child = spawn(
      spec.bwrap,
      [
        ...spec.bwrapArgs,
        '--bind',
        dir,
        NET_DIR_INSIDE,
        '--',
        process.execPath,
        netGuestScript(),
        JSON.stringify(guest),
        '--',
        ...command,
      ],
      { stdio: 'inherit' },
    );
    // Its group is signalled as a whole; a signal to this process alone is passed on.
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => child.kill(sig));
    // bwrap dies with its parent (this); this dies with its own, the runner,
    // so a SIGKILLed runner still takes its sandboxes with it.
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid === parent) return;
      // Leading its group (as the runner starts it), it ends the whole
      // group: a bwrap killed mid-setup leaves a child waiting on it that
      // --die-with-parent does not yet cover.
      if (leadsGroup()) {
        cleanup();
        process.kill(-process.pid, 'SIGKILL');
      }
      child.kill('SIGKILL');
    }, 250).unref();
    child.on('error', (e) => {
      process.stderr.write(`incrementum: cannot start bubblewrap (${spec.bwrap}): ${e.message}\n`);
      cleanup();
      process.exit(127);
    });
    child.on('exit', (code, signal) => {
      cleanup();
      if (signal) {
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
      }
      process.exit(code ?? 1);
    });
  } catch (e) {
    cleanup();
    throw e;
  }
}

main().catch((e: unknown) => {
  process.stderr.write(
    `incrementum: the sandbox's network proxy failed: ${e instanceof Error ? e.message : String(e)}\n`,
  );
  process.exit(1);
});
