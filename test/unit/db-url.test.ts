// A database URL's password never appears in what incrementum shows: the
// URL's redacted form, and the PostgreSQL driver's errors (a wrong password,
// an unreachable server, a missing database) against the run's private server.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { openPgStore } from '../../src/state/pg/index.js';
import { probePgStore } from '../../src/state/pg/probe.js';
import { configuredStoreUrl } from '../../src/state/store-url.js';
import { dbUrlPassword, redactDbUrl, scrubDbUrl } from '../../src/text/db-url.js';
import { dropDatabase, freshDatabase, passwordUrl, pgServer, pgWhyNot } from '../helpers/pg.js';

describe("ii doctor's probe of a URL it cannot read", () => {
  it('is a finding saying to percent-encode, not an internal error, with no part of the password', async () => {
    // Never connects: the URL is refused as it is read.
    const p = await probePgStore('postgres://ii:ab/cd+ef@127.0.0.1:1/incr', 1000);
    expect(p.schema).toBeNull();
    expect(p.error).toMatch(/Percent-encode/);
    expect(p.error).not.toContain('ab/cd');
    expect(p.location).not.toContain('ab/cd');
  });
});

describe('redactDbUrl', () => {
  it.each([
    [
      'postgres://ii:s3cr%40t@db.internal:5432/incrementum',
      'postgres://ii:[REDACTED]@db.internal:5432/incrementum',
    ],
    ['postgresql://u:p@h/d?sslmode=require', 'postgresql://u:[REDACTED]@h/d?sslmode=require'],
    ['postgres://ii@db.internal/incrementum', 'postgres://ii@db.internal/incrementum'],
    ['postgres://h/d?user=u&password=pw1', 'postgres://h/d?user=u&password=[REDACTED]'],
    ['postgres://ii@localhost/d?host=%2Ftmp%2Fs', 'postgres://ii@localhost/d?host=%2Ftmp%2Fs'],
    // Not a URL the parser takes: everything between :// and @ goes.
    ['postgres://u:p w@h:x/d', 'postgres://[REDACTED]@h:x/d'],
  ])('%s', (url, shown) => {
    expect(redactDbUrl(url)).toBe(shown);
  });

  it('finds the password (decoded) and scrubs it from any text, raw or encoded', () => {
    const url = 'postgres://ii:p%40ss%2Fw0rd@db/x';
    expect(dbUrlPassword(url)).toBe('p@ss/w0rd');
    expect(dbUrlPassword('postgres://ii@db/x')).toBeNull();
    const text = `cannot connect to ${url}: password "p@ss/w0rd" (p%40ss%2Fw0rd) rejected`;
    const out = scrubDbUrl(text, url);
    expect(out).toBe(
      'cannot connect to postgres://ii:[REDACTED]@db/x: password "[REDACTED]" ([REDACTED]) rejected',
    );
  });

  // A password typed with a raw / ? or # (a generated one often has a /): the
  // URL parser refuses the text, or reads the password's start as a port and
  // the rest as the path. It was shown whole, and a config file holding it was
  // not refused for being readable by others.
  it.each([
    ['postgres://ii:ab/cd+ef@db.internal/incr', 'ab/cd+ef'],
    ['postgres://ii:pa#ss@db/x', 'pa#ss'],
    ['postgres://ii:pa?ss@db/x', 'pa?ss'],
    ['postgres://ii:12/34zz@db/x', '12/34zz'],
    // Read as a port and a query or a fragment (not a path): shown whole before.
    ['postgres://ii:12?34zz@db/x', '12?34zz'],
    ['postgres://ii:12#34zz@db/x', '12#34zz'],
    ['postgres://ii:?34zz@db/x', '?34zz'],
    ['postgres://ii:#34zz@db/x', '#34zz'],
    ['postgres://ii:12/ab?cd@db/x', '12/ab?cd'],
  ])('a raw / ? or # in the password: %s shows none of it', (url, pw) => {
    expect(redactDbUrl(url)).toBe('postgres://[REDACTED]@' + url.slice(url.lastIndexOf('@') + 1));
    expect(dbUrlPassword(url)).toBe(pw);
    expect(scrubDbUrl(`at ${url}: bad (${pw})`, url)).not.toContain(pw);
  });

  it("an @ in a query is taken as a misread password's (over-redacted rather than a password shown), %40 as the URL's", () => {
    // A raw @ after the host cannot be told from a password's: postgres://ii:12/ab?cd@db/x
    // parses as host ii, port 12, database ab and a query.
    expect(redactDbUrl('postgres://db:5432/incr?application_name=me@corp')).toBe(
      'postgres://[REDACTED]@corp',
    );
    const encoded = 'postgres://db:5432/incr?application_name=me%40corp';
    expect(redactDbUrl(encoded)).toBe(encoded);
    expect(dbUrlPassword(encoded)).toBeNull();
  });

  it('a config file holding such a URL, readable by others, is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ii-dburl-'));
    try {
      const cfg = join(dir, 'incrementum', 'config.toml');
      mkdirSync(join(dir, 'incrementum'));
      writeFileSync(cfg, '[state]\nurl = "postgres://ii:ab/cd+ef@db.internal/incr"\n');
      chmodSync(cfg, 0o644);
      expect(() => configuredStoreUrl({ XDG_CONFIG_HOME: dir })).toThrow(/chmod 600/);
      chmodSync(cfg, 0o600);
      expect(configuredStoreUrl({ XDG_CONFIG_HOME: dir })?.url).toContain('db.internal');
      // Unquoted, the line is not TOML: the parser's error quotes it.
      writeFileSync(cfg, '[state]\nurl = postgres://ii:ab/cd+ef@db.internal/incr\n');
      expect(() => configuredStoreUrl({ XDG_CONFIG_HOME: dir })).toThrow(/not valid TOML/);
      expect(() => configuredStoreUrl({ XDG_CONFIG_HOME: dir })).not.toThrow(/cd\+ef/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const server = pgServer();
describe.skipIf(!server)(`the PostgreSQL driver's errors${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  /** Every form an error can be printed in. */
  const shown = (err: unknown): string => `${String(err)}\n${(err as Error).stack ?? ''}\n${inspect(err)}`;

  it('connects with the right password over TCP', async () => {
    const db = await freshDatabase(server!);
    try {
      const s = await openPgStore(passwordUrl(server!, db));
      expect(s.location).toBe(
        `postgres://${server!.passwordUser}:[REDACTED]@127.0.0.1:${server!.port}/${db}`,
      );
      expect(s.location).not.toContain(server!.password);
      await s.todos.create('r', { title: 'over tcp' });
      expect(await s.todos.list('r')).toHaveLength(1);
      await s.close();
    } finally {
      await dropDatabase(server!, db);
    }
  });

  it('a wrong password: a UserError saying what to check, with neither password in it', async () => {
    const wrong = `wrong-${server!.password}-x`;
    const err = await openPgStore(passwordUrl(server!, 'postgres', wrong)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    const text = shown(err);
    expect(text).toMatch(/password authentication failed/);
    expect(text).toMatch(/Check the password in II_DATABASE_URL/);
    expect(text).toContain(':[REDACTED]@127.0.0.1');
    expect(text).not.toContain(wrong);
    expect(text).not.toContain(server!.password);
  });

  it('an unreachable server and a missing database: clear UserErrors, the password redacted', async () => {
    const closed = passwordUrl(server!, 'postgres').replace(`:${server!.port}/`, ':1/');
    const e1 = await openPgStore(closed).then(
      () => null,
      (e: unknown) => e,
    );
    expect(e1).toBeInstanceOf(UserError);
    expect(shown(e1)).toMatch(/ECONNREFUSED[\s\S]*Is the server running/);
    expect(shown(e1)).not.toContain(server!.password);
    const e2 = await openPgStore(passwordUrl(server!, 'no_such_db')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(e2).toBeInstanceOf(UserError);
    expect(shown(e2)).toMatch(/database "no_such_db" does not exist[\s\S]*Create the database/);
    expect(shown(e2)).not.toContain(server!.password);
  });

  it('a URL whose password has a raw /: a UserError saying to encode it, with no part of the password in it', async () => {
    const pw = `${server!.password}/x+y`;
    const url = `postgres://${server!.passwordUser}:${pw}@127.0.0.1:${server!.port}/postgres`;
    const err = await openPgStore(url).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    const text = shown(err);
    expect(text).toMatch(/Percent-encode/);
    expect(text).not.toContain(server!.password);
    expect(text).not.toContain('/x+y');
  });
});
