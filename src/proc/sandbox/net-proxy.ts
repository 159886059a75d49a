// The filtering proxy a sandbox with `network = { allow = [...] }` reaches
// the world through, and the plain forwards its loopback entries get. Both
// listen on Unix sockets in a folder bound into the sandbox (the sandbox has
// a network namespace of its own; a socket file is the one way out).
//
// Hand-written on node:http's 'connect' and 'request' events rather than the
// `proxy` package (TooTallNate's): that one answers a refused target with a
// 407 authentication challenge (its only hook is `authenticate`), adds Via
// and X-Forwarded-For headers, and brings a CLI's dependencies; the filter is
// the part we need, and a tunnel is a few pipes.
import { createServer as httpServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { allows, type AllowEntry } from '../../model/net-allow.js';

const refused = (target: string) =>
  `${target} is not in [sandbox] network allow (incrementum's sandbox proxy)\n`;

/** `host:port` (CONNECT's target), with IPv6 brackets; null when malformed. */
export function splitTarget(target: string): { host: string; port: number } | null {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(target) ?? /^([^:[\]]+):(\d{1,5})$/.exec(target);
  const port = m ? Number(m[2]) : 0;
  return m && port > 0 && port < 65536 ? { host: m[1]!, port } : null;
}

/** Pipes two sockets together; either's end or error ends both. */
function splice(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

/** An HTTP proxy (CONNECT tunnels and plain `http://` requests) that reaches only what `allow` allows. */
export function filteringProxy(allow: readonly AllowEntry[]): Server {
  const server = httpServer();
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    const t = splitTarget(req.url ?? '');
    if (!t || !allows(allow, t.host, t.port)) {
      const body = refused(req.url ?? '(no target)');
      client.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    const upstream = connect(t.port, t.host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      splice(client, upstream);
    });
    upstream.once('error', (e) => {
      if (!client.destroyed)
        client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${e.message}\n`);
    });
  });
  server.on('request', (req, res) => {
    let url: URL | null = null;
    try {
      url = new URL(req.url ?? '');
    } catch {}
    if (!url || url.protocol !== 'http:') {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('a proxy request needs an absolute http:// URL\n');
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || 80);
    if (!allows(allow, host, port)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(refused(url.host));
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const out = request(
      { host, port, method: req.method, path: url.pathname + url.search, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`${e.message}\n`);
    });
    req.pipe(out);
  });
  return server;
}

/** A server that hands each connection to `host:port` as it is (a loopback entry's forward). */
export function tcpForward(host: string, port: number): ReturnType<typeof createServer> {
  return createServer((c) => {
    c.on('error', () => c.destroy());
    const up = connect(port, host);
    up.once('connect', () => splice(c, up));
    up.once('error', () => c.destroy());
  });
}

/** A server that hands each connection to the Unix socket `path` (inside the sandbox: its loopback to the way out). */
export function unixForward(path: string): ReturnType<typeof createServer> {
  return createServer((c) => {
    c.on('error', () => c.destroy());
    const up = connect(path);
    up.once('connect', () => splice(c, up));
    up.once('error', () => c.destroy());
  });
}
