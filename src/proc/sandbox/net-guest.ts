// Inside half of a sandbox with `network = { allow = [...] }`: the command
// bwrap starts. In the sandbox's own network namespace (only its loopback
// is up) it listens on loopback for the proxy and for each allowed loopback
// port, hands each connection to its Unix socket (net-host.ts serves the
// other end outside), then runs the job's command with the proxy in its
// environment and ends with its status.
//
//   node net-guest.js <GuestSpec JSON> -- <command> [args...]
import { spawn } from 'node:child_process';
import type { AddressInfo, Server } from 'node:net';
import { unixForward } from './net-proxy.js';
import type { GuestSpec } from './net-spec.js';

const listen = (s: Server, port: number, host: string) =>
  new Promise<void>((resolve, reject) => s.once('error', reject).listen(port, host, () => resolve()));

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[1] !== '--' || argv.length < 3)
    throw new Error('usage: net-guest.js <spec> -- <command> [args...]');
  const spec = JSON.parse(argv[0]!) as GuestSpec;
  const [cmd, ...args] = argv.slice(2);
  const servers: Server[] = [];
  for (const f of spec.forwards) {
    const host = f.host === 'localhost' ? '127.0.0.1' : f.host;
    const s = unixForward(f.socket);
    await listen(s, f.port, host).catch((e: Error) => {
      throw new Error(`cannot listen on ${host}:${f.port} inside the sandbox: ${e.message}`);
    });
    servers.push(s);
    if (f.host === 'localhost') {
      // localhost may resolve to ::1 first; where there is no IPv6 it stays 127.0.0.1 only.
      const s6 = unixForward(f.socket);
      await listen(s6, f.port, '::1').then(
        () => servers.push(s6),
        () => {},
      );
    }
  }
  // An ephemeral port: a job's own servers bind the usual ones (3000, 8080).
  const proxy = unixForward(spec.proxy);
  await listen(proxy, 0, '127.0.0.1');
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const noProxy = 'localhost,127.0.0.1,::1';
  const env = {
    ...process.env,
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    // Node 24's own http and fetch take the proxy from the environment only with this.
    NODE_USE_ENV_PROXY: '1',
  };
  const child = spawn(cmd!, args, { stdio: 'inherit', env });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => child.kill(sig));
  child.on('error', (e) => {
    process.stderr.write(`incrementum: cannot start ${cmd} in the sandbox: ${e.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    for (const s of servers) s.close();
    proxy.close();
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}

main().catch((e: unknown) => {
  process.stderr.write(`incrementum: the sandbox's network: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
