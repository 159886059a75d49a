// What the two halves of an allow-list sandbox are told (as one JSON
// argument): net-host.ts outside, which serves the proxy and the loopback
// forwards on Unix sockets and starts bwrap, and net-guest.ts inside, which
// listens on the sandbox's loopback and starts the job's command.
import { join } from 'node:path';
import { packageRoot } from '../../package-root.js';

/** Where the socket folder is bound inside (on the sandbox's private /tmp). */
export const NET_DIR_INSIDE = '/tmp/.ii-net';
/** The socket folder's name outside, in the runner's temp dir: `ii-net-<net-host's pid>-XXXXXX`. */
export const NET_DIR_PREFIX = 'ii-net-';

export interface HostSpec {
  bwrap: string;
  /** bwrap's options, without the socket folder's bind and without the command. */
  bwrapArgs: string[];
  /** The `[sandbox] network` allow entries. */
  allow: string[];
}

export interface GuestSpec {
  /** The proxy's socket, in NET_DIR_INSIDE. */
  proxy: string;
  /** Each loopback entry: listened on at host:port inside, handed to its socket. */
  forwards: { host: string; port: number; socket: string }[];
}

/** The compiled helpers (run as plain node scripts, from the package's dist/src). */
export const netHostScript = (): string =>
  join(packageRoot(), 'dist', 'src', 'proc', 'sandbox', 'net-host.js');
export const netGuestScript = (): string =>
  join(packageRoot(), 'dist', 'src', 'proc', 'sandbox', 'net-guest.js');
