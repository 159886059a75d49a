// A private PostgreSQL server for a test run: initdb in a temp dir, the
// server on a Unix socket in that dir and on a free loopback port, stopped at
// the end. Postgres refuses to run as root (CI runs as root), so there it runs
// as `nobody` through setpriv.
//
// A killed test run never leaves it running: the server is started (by
// setpriv, which stays out of the way by exec'ing it) with a parent-death
// signal, SIGINT (postgres's "fast shutdown"), so when the process that
// started it dies, by SIGKILL included, the kernel tells the server to stop.
// That process is the vitest main process (globalSetup), whose main thread
// lives as long as it does. The folder such a run leaves is removed by the
// next run (sweepLeftovers).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PgServerInfo {
  /** The Unix socket's directory: connect as `user` with no password (trust). */
  socketDir: string;
  /** The loopback TCP port: connect as `passwordUser` with `password` (scram). */
  port: number;
  user: string;
  passwordUser: string;
  password: string;
}

export interface PgServer extends PgServerInfo {
  stop(): Promise<void>;
}

/** The directory of initdb and postgres: II_TEST_PG_BIN, Debian's newest, or PATH. */
export function pgBinDir(): string | null {
  const given = process.env.II_TEST_PG_BIN;
  if (given) return existsSync(join(given, 'initdb')) ? given : null;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) return dir;
  return null;
}

/** The uid/gid the server runs as: ours, or nobody's when we are root (postgres refuses root). */
const NOBODY = 65534;
const asRoot = (): boolean => process.getuid?.() === 0;

/** Where the server's folder goes: as root, /tmp, which nobody can reach (a TMPDIR under /root it could not). */
const base = (): string => (asRoot() && existsSync('/tmp') ? '/tmp' : tmpdir());

/** argv for running `bin` as the server's user, with a parent-death signal when setpriv is there. */
function asServerUser(bin: string, args: string[], deathSignal: string | null): [string, string[]] {
  const priv: string[] = [];
  if (asRoot()) priv.push(`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups');
  if (deathSignal) priv.push(`--pdeathsig=${deathSignal}`);
  if (priv.length === 0) return [bin, args];
  return ['setpriv', [...priv, bin, ...args]];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Removes the folders of servers of killed runs: the server itself ended
 * with its parent (the parent-death signal), its folder (40 MB) stayed. Only
 * folders older than ten minutes whose server is not running: a run starting
 * at this moment may be making its own.
 */
function sweepLeftovers(): void {
  const old = Date.now() - 10 * 60_000;
  for (const name of readdirSync(base()).filter((n) => n.startsWith('ii-pg-'))) {
    const dir = join(base(), name);
    try {
      if (statSync(dir).mtimeMs > old) continue;
      const pidFile = join(dir, 'data', 'postmaster.pid');
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
        if (pid > 0 && alive(pid)) continue;
      }
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another run swept it first, or it is not ours to read: leave it.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Starts a server; throws (saying why, with the server's log) when it cannot. */
/**
 * `statements`: the server counts each statement's calls and time
 * (pg_stat_statements, PostgreSQL's own contrib module), for a bench to read.
 */
export async function startPgServer(o: { statements?: boolean } = {}): Promise<PgServer> {
  sweepLeftovers();
  const bin = pgBinDir();
  if (!bin)
    throw new Error('no PostgreSQL server binaries (initdb, postgres) found: apt-get install postgresql');
  const dir = mkdtempSync(join(base(), 'ii-pg-'));
  if (asRoot()) chownSync(dir, NOBODY, NOBODY);
  const data = join(dir, 'data');
  const user = 'ii';
  const passwordUser = 'ii_pw';
  // Random per run: a test asserts it is never printed.
  const password = `pw-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}`;
  let child: ChildProcess | null = null;
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    const [cmd, args] = asServerUser(
      join(bin, 'initdb'),
      ['-D', data, '-U', user, '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
      null,
    );
    execFileSync(cmd, args, { stdio: 'pipe' });
    // Unix socket: trust for the test user. Loopback: a password (scram).
    writeFileSync(
      join(data, 'pg_hba.conf'),
      `local all ${user} trust\nhost all ${passwordUser} 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 reject\n`,
    );
    if (asRoot()) chownSync(join(data, 'pg_hba.conf'), NOBODY, NOBODY);
    const port = await freePort();
    const [pcmd, pargs] = asServerUser(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-k',
        dir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        // A throwaway server: durability costs time and buys nothing.
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
        '-c',
        'shared_buffers=32MB',
        ...(o.statements ? ['-c', 'shared_preload_libraries=pg_stat_statements'] : []),
      ],
      existsSync('/usr/bin/setpriv') || asRoot() ? 'INT' : null,
    );
    child = spawn(pcmd, pargs, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-8000);
    });
    const exited = new Promise<number | null>((r) => child?.once('exit', (code) => r(code)));
    // Ready when it accepts a connection on its socket (bounded).
    const end = Date.now() + 30_000;
    for (;;) {
      const client = new pg.Client({ host: dir, port, user, database: 'postgres' });
      try {
        await client.connect();
        await client.query(`CREATE ROLE ${passwordUser} LOGIN SUPERUSER PASSWORD '${password}'`);
        await client.end();
        break;
      } catch (err) {
        await client.end().catch(() => {});
        if (child.exitCode !== null || Date.now() > end)
          throw new Error(`PostgreSQL did not start (${(err as Error).message}):\n${stderr}`, { cause: err });
        await Promise.race([exited, new Promise((r) => setTimeout(r, 50))]);
      }
    }
    const running = child;
    return {
      socketDir: dir,
      port,
      user,
      passwordUser,
      password,
      async stop() {
        if (running.exitCode === null && running.signalCode === null) {
          running.kill('SIGINT'); // fast shutdown: ends the sessions and stops
          const killed = setTimeout(() => running.kill('SIGKILL'), 20_000);
          await exited;
          clearTimeout(killed);
        }
        cleanup();
      },
    };
  } catch (err) {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    cleanup();
    throw err;
  }
}
