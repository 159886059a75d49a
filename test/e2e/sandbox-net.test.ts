// `[sandbox] network = { allow = [...] }` with the real bubblewrap, on
// loopback only: the sandbox has a network namespace of its own, an allowed
// loopback port of the host is forwarded into it, any other is not there,
// the filtering proxy lets through only what is allowed, two sandboxes bind
// the same port at once, and the proxy (net-host.js) and its socket folder
// are gone when the sandboxed process ends. Runs the built helpers
// (dist/src/proc/sandbox/net-*.js): build first.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Config } from '../../src/model/config.js';
import { jobSandbox, type Sandbox } from '../../src/proc/sandbox/sandbox.js';
import { JobFixture, jobIdFrom, verdict } from '../helpers/job.js';
import { isRunning, runningWith } from '../helpers/procs.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';

const bwrap = (() => {
  try {
    execFileSync('bwrap', ['--unshare-user', '--unshare-net', '--ro-bind', '/', '/', 'true'], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
})();
const why = 'bubblewrap is not installed or cannot make a user namespace here (apt install bubblewrap)';

/** An HTTP server on the host's loopback that answers with its name. */
async function hostServer(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((_, res) => res.end(name));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A node one-liner, quoted for sh. */
const nodeE = (code: string) => `${process.execPath} -e '${code}'`;

interface Ran {
  pid: number;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  out: () => string;
}

/** Starts `sh -c cmd` in the sandbox, in its own process group (as the runner does). */
function runIn(sb: Sandbox, cmd: string): Ran {
  const w = sb.wrap('/bin/sh', ['-c', cmd], process.env);
  const child = spawn(w.command, w.args, { env: w.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('close', (code, signal) => r({ code, signal })),
  );
  return { pid: child.pid!, exit, out: () => out };
}

/** The proxy's socket folders of net-host `pid`, in the temp dir it was given (TMPDIR=/tmp). */
const netDirs = (pid: number) => readdirSync('/tmp').filter((n) => n.startsWith(`ii-net-${pid}-`));

describe.skipIf(!bwrap)(`network allow list (bubblewrap)${bwrap ? '' : ` — skipped: ${why}`}`, () => {
  let tmp: ReturnType<typeof tempDir>;
  let allowed: { server: Server; port: number };
  let other: { server: Server; port: number };
  beforeAll(async () => {
    allowed = await hostServer('hello from the allowed port');
    other = await hostServer('hello from another port');
  });
  afterAll(() => {
    allowed.server.close();
    other.server.close();
  });
  beforeEach(() => {
    tmp = tempDir('ii-sbnet-');
  });
  afterEach(() => tmp.cleanup());

  function sandbox(allow: string[]): Sandbox {
    const ws = join(tmp.path, 'ws');
    mkdirSync(ws, { recursive: true });
    gitRepo(ws);
    const sb = jobSandbox({
      config: Config.parse({ sandbox: { mode: 'required', network: { allow } } }),
      repoRoot: ws,
      workspace: ws,
      stateDir: join(tmp.path, 'state'),
      agent: { name: 'test', command: ['/bin/sh'] },
      env: { ...process.env, HOME: tmp.path },
    });
    return sb!;
  }

  it('reaches an allowed loopback port of the host, directly and through the proxy; another port neither way', async () => {
    const sb = sandbox([`127.0.0.1:${allowed.port}`]);
    // fetch with the proxy variables as set in the sandbox: loopback is direct (NO_PROXY)...
    const get = (port: number) =>
      nodeE(
        `fetch("http://127.0.0.1:${port}/").then(r => r.text()).then(t => console.log("${port}:", t), e => console.log("${port}: failed", e.cause?.code ?? e.message))`,
      );
    // ...and with NO_PROXY emptied, through the proxy (NODE_USE_ENV_PROXY): the proxy's own filter.
    const viaProxy = (port: number) => `NO_PROXY= no_proxy= ${get(port).replace(/"(\d+):/g, '"proxy $1:')}`;
    const r = runIn(
      sb,
      [
        get(allowed.port),
        get(other.port),
        viaProxy(allowed.port),
        viaProxy(other.port),
        'echo "env $NODE_USE_ENV_PROXY"',
      ].join('; '),
    );
    expect(await r.exit).toEqual({ code: 0, signal: null });
    const out = r.out();
    expect(out).toContain(`${allowed.port}: hello from the allowed port`);
    expect(out).toMatch(new RegExp(`\\n${other.port}: failed ECONNREFUSED`));
    expect(out).toContain(`proxy ${allowed.port}: hello from the allowed port`);
    expect(out).not.toContain('hello from another port');
    expect(out).toContain('env 1');
  }, 60_000);

  it('a CONNECT to a port not allowed is refused by the proxy with 403', async () => {
    const sb = sandbox([`127.0.0.1:${allowed.port}`]);
    const connect = (port: number) =>
      nodeE(
        `const u = new URL(process.env.HTTPS_PROXY); require("http").request({ host: u.hostname, port: u.port, method: "CONNECT", path: "127.0.0.1:${port}" }).on("connect", (res, s) => { console.log("connect ${port}", res.statusCode); s.destroy(); }).on("error", e => console.log("connect ${port} error", e.message)).end()`,
      );
    const r = runIn(sb, `${connect(allowed.port)}; ${connect(other.port)}`);
    expect(await r.exit).toEqual({ code: 0, signal: null });
    expect(r.out()).toContain(`connect ${allowed.port} 200`);
    expect(r.out()).toContain(`connect ${other.port} 403`);
  }, 60_000);

  it('two sandboxes bind the same port at once', async () => {
    const a = sandbox([]);
    // (in the workspace: the one folder both may write)
    const flags = join(tmp.path, 'ws', 'flags');
    mkdirSync(flags);
    // Each binds :3000, says so, and holds it until both have.
    const serve = (name: string) =>
      nodeE(
        `const fs = require("fs"); require("net").createServer().listen(3000, "127.0.0.1", () => { fs.writeFileSync("${flags}/${name}", ""); const t = setInterval(() => { if (fs.readdirSync("${flags}").length === 2) process.exit(0); }, 20); setTimeout(() => process.exit(4), 30000); }).on("error", e => { console.log(e.code); process.exit(3); })`,
      );
    const one = runIn(a, serve('one'));
    const two = runIn(a, serve('two'));
    const [r1, r2] = await Promise.all([one.exit, two.exit]);
    expect(r1, one.out()).toEqual({ code: 0, signal: null });
    expect(r2, two.out()).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('the proxy and its socket folder are gone when the sandboxed process ends, or its group is killed', async () => {
    const sb = sandbox([`127.0.0.1:${allowed.port}`]);
    const done = runIn(sb, 'exit 5');
    expect(await done.exit).toEqual({ code: 5, signal: null });
    expect(isRunning(done.pid)).toBe(false);
    expect(netDirs(done.pid)).toEqual([]);

    const tag = `sleep 3${process.pid}${Date.now() % 100000}`;
    const held = runIn(sb, `setsid ${tag} </dev/null >/dev/null 2>&1 & ${tag}`);
    const sleeps = () =>
      runningWith(tag).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0'));
    await waitFor(() => sleeps().length === 2, 'the sandboxed sleeps to start', 30_000);
    // While it runs, its proxy is up with its socket folder.
    expect(netDirs(held.pid).length).toBe(1);
    expect(isRunning(held.pid)).toBe(true);
    process.kill(-held.pid, 'SIGTERM');
    expect((await held.exit).signal).toBe('SIGTERM');
    await waitFor(() => runningWith(tag).length === 0, 'no sandboxed process left', 10_000);
    expect(isRunning(held.pid)).toBe(false);
    expect(netDirs(held.pid)).toEqual([]);
  }, 60_000);

  it('a parent killed with SIGKILL (a dead runner) takes the proxy and the sandbox with it', async () => {
    const sb = sandbox([`127.0.0.1:${allowed.port}`]);
    const tag = `sleep 4${process.pid}${Date.now() % 100000}`;
    const w = sb.wrap('/bin/sh', ['-c', `setsid ${tag} </dev/null >/dev/null 2>&1 & ${tag}`], process.env);
    // The runner's stand-in: a shell whose child is net-host.js, leading its
    // own group as the runner starts it.
    const parent = spawn('/bin/sh', ['-c', 'setsid "$@" & wait', 'sh', w.command, ...w.args], {
      env: w.env,
      stdio: 'ignore',
      detached: true,
    });
    const gone = new Promise((r) => parent.on('exit', r));
    try {
      const sleeps = () =>
        runningWith(tag).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0'));
      await waitFor(() => sleeps().length === 2, 'the sandboxed sleeps to start', 30_000);
      const host = runningWith(tag).find((pid) =>
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1]?.endsWith('net-host.js'),
      )!;
      expect(netDirs(host).length).toBe(1);
      process.kill(parent.pid!, 'SIGKILL');
      await gone;
      await waitFor(() => runningWith(tag).length === 0, 'no sandboxed process or proxy left', 10_000);
      expect(netDirs(host)).toEqual([]);
    } finally {
      // (a failed check above must not leave it running)
      try {
        process.kill(-parent.pid!, 'SIGKILL');
      } catch {}
    }
  }, 60_000);

  it("ii job do: a test command and the agent's shell reach the allowed port and not another", async () => {
    const f = new JobFixture('ii-sbnet-job-');
    try {
      const reach = (port: number, code: number) =>
        `${process.execPath} -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(${code})).on('error', () => process.exit(${code ? 0 : 3}))"`;
      // Passes only when the allowed port answers and the other does not.
      f.setup([reach(allowed.port, 0), reach(other.port, 4)], {
        job: `\n[sandbox]\nnetwork = { allow = ["127.0.0.1:${allowed.port}"] }\n`,
      });
      // The agent's shell (a real agent's bash tool) tries both ports too: 0 where it connected.
      const dir = join(f.tmp.path, 'agent');
      mkdirSync(dir);
      const tryPort = (name: string, port: number) => ({
        type: 'shell',
        command: `${reach(port, 0)}; echo $? > "${dir}/${name}.rc"`,
      });
      const scenario = join(dir, 'scenario.json');
      writeFileSync(
        scenario,
        JSON.stringify({
          implement: [{ actions: [tryPort('allowed', allowed.port), tryPort('other', other.port)] }],
          review: [verdict('ACCEPT', 'fine')],
        }),
      );
      const r = await f.runAsync(['job', 'do', '--title', 'allow-list'], scenario);
      expect(r.code, r.stderr).toBe(0);
      expect(f.show(jobIdFrom(r.stderr)).status).toBe('completed');
      expect(readFileSync(join(dir, 'allowed.rc'), 'utf8').trim()).toBe('0');
      expect(readFileSync(join(dir, 'other.rc'), 'utf8').trim()).toBe('3');
    } finally {
      f.cleanup();
    }
  }, 120_000);
});
