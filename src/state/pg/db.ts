// The PostgreSQL connection: a pool, the schema check and migrations, and
// write transactions that stamp store versions as SQLite's do.
//
// Versions. SQLite's writers take one lock for the whole transaction, so the
// store version each one commits (meta 'version') follows commit order, and a
// reader asks for the rows written after the version it saw. Here writers run
// at once, and only the end of each takes the version: the last thing a write
// transaction does is bump meta's row (which locks it until COMMIT) and stamp
// the jobs and todos it wrote with the new value, in one message with its
// COMMIT (versionCommit). Versions so follow commit order, while the work
// before the bump (reads, claims with SKIP LOCKED) overlaps; the bump only
// stamps rows the transaction already holds, so it never waits on another
// lock while holding meta's, and cannot deadlock.
import { connect } from 'node:net';
import pg from 'pg';
import { UserError } from '../../errors.js';
import { redactDbUrl, scrubDbUrl } from '../../text/db-url.js';
import { PG_BASELINE, PG_MIGRATIONS, PG_SCHEMA_VERSION } from './migrations.js';

export type Row = Record<string, unknown>;
export type Param = string | number | null | boolean | string[] | number[];

const INT8 = 20;
const NUMERIC = 1700;
/**
 * int8 (BIGINT, count(*)) as a JavaScript number, as node:sqlite gives: the
 * store caps what it keeps below 2^53 (model/usage.ts MAX_MICROS).
 */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 || oid === NUMERIC
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** The key of the advisory lock that migrations take, so two processes never migrate at once. */
export const MIGRATION_LOCK = 0x69690001;

/** The LISTEN/NOTIFY channel each write transaction announces its store version on. */
export const CHANNEL = 'ii_store';

/** SQLSTATEs a transaction is retried on: deadlock, serialization failure. */
const RETRY = new Set(['40P01', '40001']);

/** What runs a query: the pool (a read) or a transaction. */
export interface Q {
  q<T = Row>(sql: string, params?: readonly Param[]): Promise<T[]>;
  one<T = Row>(sql: string, params?: readonly Param[]): Promise<T | undefined>;
  /**
   * Statements without parameters (values inlined with `literal`) sent
   * together and answered in one round trip (the simple query protocol):
   * each query is a write to the server's socket and a wait for its answer,
   * which on a busy machine cost a dashboard more than reading the rows did
   * (bench/shared-store.bench.js: a third of its CPU in the socket's writev).
   */
  many(sqls: readonly string[]): Promise<Row[][]>;
}

/**
 * A text[] written into SQL text as one quoted constant (for `many`, which
 * takes no parameters): one constant, not an ARRAY[…] of thousands of
 * literals for the server to parse one by one.
 */
export const textArray = (values: readonly string[]): string =>
  `${pg.escapeLiteral(`{${values.map((v) => `"${v.replace(/["\\]/g, '\\$&')}"`).join(',')}}`)}::text[]`;

/**
 * The end of a write transaction as one simple query (no parameters: ids
 * inlined as quoted constants): meta's version bumped and announced on
 * CHANNEL, the jobs and todos written stamped with it (data-modifying WITH
 * clauses run whether or not the query reads them), then COMMIT.
 */
function versionCommit(jobs: readonly string[], todos: readonly [string, string][]): string {
  const stamps = [
    ...(jobs.length
      ? [
          `j AS (UPDATE jobs SET changed_version = (SELECT value FROM v) WHERE id = ANY(${textArray(jobs)}) RETURNING 1)`,
        ]
      : []),
    ...(todos.length
      ? [
          `t AS (UPDATE todos SET changed_version = (SELECT value FROM v) FROM unnest(${textArray(todos.map((p) => p[0]))}, ${textArray(todos.map((p) => p[1]))}) AS s(repo, id) WHERE todos.repo = s.repo AND todos.id = s.id RETURNING 1)`,
        ]
      : []),
  ];
  return [
    `WITH v AS (UPDATE meta SET value = value + 1 WHERE key = 'version' RETURNING value)`,
    ...stamps.map((c) => `, ${c}`),
    `SELECT value, pg_notify('${CHANNEL}', value::text) FROM v;`,
    'COMMIT',
  ].join('\n');
}

/** A `pg.Client.query` answer to several statements: one result each (one statement gives a lone result). */
function rowsOfEach(res: pg.QueryResult | pg.QueryResult[], n: number): Row[][] {
  const all = Array.isArray(res) ? res : [res];
  if (all.length !== n) throw new Error(`expected ${n} results, got ${all.length}`);
  return all.map((r) => r.rows as Row[]);
}

export interface Tx extends Q {
  q<T = Row>(sql: string, params?: readonly Param[]): Promise<T[]>;
  one<T = Row>(sql: string, params?: readonly Param[]): Promise<T | undefined>;
  /** Stamps the job with this transaction's store version when it commits. */
  stampJob(id: string): void;
  stampTodo(repo: string, id: string): void;
}

export class PgDb {
  readonly pool: pg.Pool;
  /** The URL as it may be shown (password redacted). */
  readonly location: string;
  /** Runs at the end of each write transaction with the jobs it wrote (the job store keeps their listing texts). */
  beforeCommit: ((t: Tx, jobIds: string[]) => Promise<void>) | null = null;
  /** The pool's connections checked out (a read or a transaction in flight): close() cuts them. */
  private readonly busy = new Set<pg.PoolClient>();
  /** The connections a write transaction holds (tx): given a moment to commit at close(), not cut at once. */
  private readonly writing = new Set<pg.PoolClient>();
  /** close() has begun: a transaction whose connection it cut is not run again (the pool is ending). */
  private closing = false;
  /** Every connection the pool made that has not closed: close() cuts what a silent server leaves open. */
  private readonly clients = new Set<pg.Client>();
  /** Those of them that are connected (the others are still being made). */
  private readonly connected = new WeakSet<pg.Client>();

  constructor(private readonly url: string) {
    this.location = redactDbUrl(url);
    const clients = this.clients;
    // The pool's connections as they are made, so close() reaches one still connecting too.
    class Tracked extends pg.Client {
      constructor(config?: string | pg.ClientConfig) {
        super(config);
        clients.add(this);
        this.once('end', () => clients.delete(this));
        // Heard for the connection's whole life: the pool listens only while
        // it is idle, and the server ending the session (a restart,
        // pg_terminate_backend) while one is checked out emitted an 'error'
        // that, unheard, ended the process. The query in flight fails with
        // it, and the pool drops a connection it finds unqueryable.
        this.on('error', () => {});
      }
    }
    this.pool = new pg.Pool({
      Client: Tracked,
      connectionString: url,
      types,
      max: 4,
      idleTimeoutMillis: 10_000,
      application_name: 'incrementum',
    });
    // An idle connection the server dropped is not this process's failure:
    // the pool makes a new one for the next query.
    this.pool.on('error', () => {});
    this.pool.on('acquire', (c) => void this.busy.add(c));
    this.pool.on('release', (_err, c) => void this.busy.delete(c));
    this.pool.on('connect', (c) => void this.connected.add(c));
    this.pool.on('remove', (c) => void this.busy.delete(c as pg.PoolClient));
  }

  /** Any error, with the URL redacted and its password scrubbed; connection failures as a UserError. */
  explain(err: unknown): Error {
    if (err instanceof UserError) return err;
    const e = err as Error & { code?: string };
    const msg = scrubDbUrl(e?.message ?? String(err), this.url);
    const where = `PostgreSQL state database ${this.location}`;
    const todo: Record<string, string> = {
      '28P01': 'Check the password in II_DATABASE_URL (or [state] url).',
      '28000': "Check the user in II_DATABASE_URL and the server's pg_hba.conf.",
      '3D000': 'Create the database (createdb) or fix its name in the URL.',
      ECONNREFUSED: 'Is the server running, and on that host and port?',
      ENOTFOUND: 'Check the host name in the URL.',
      ENOENT: 'Is the server running, and is that its socket folder?',
      // A password with a raw / ? # (or @ :) cuts the URL short: the parser refuses it.
      ERR_INVALID_URL:
        'The URL could not be read. Percent-encode any / ? # @ : % in the user name or password (/ as %2F, # as %23, @ as %40), and check the host and port.',
    };
    const hint = e?.code ? todo[e.code] : undefined;
    if (hint) return new UserError(`${where}: ${msg}.\n${hint}`, 3);
    const out = new Error(`${where}: ${msg}`);
    Object.assign(out, { code: e?.code });
    return out;
  }

  /** A read; asked again once on a new connection when the one it went out on was lost. */
  async q<T = Row>(sql: string, params: readonly Param[] = []): Promise<T[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.pool.query(sql, params as unknown[])).rows as T[];
      } catch (err) {
        if (connectionLost(err) && attempt < 3) continue;
        throw this.explain(err);
      }
    }
  }

  async one<T = Row>(sql: string, params: readonly Param[] = []): Promise<T | undefined> {
    return (await this.q<T>(sql, params))[0];
  }

  async many(sqls: readonly string[]): Promise<Row[][]> {
    if (sqls.length === 0) return [];
    for (let attempt = 1; ; attempt++) {
      try {
        const res = (await this.pool.query(sqls.join(';\n'))) as unknown as pg.QueryResult | pg.QueryResult[];
        return rowsOfEach(res, sqls.length);
      } catch (err) {
        if (connectionLost(err) && attempt < 3) continue;
        throw this.explain(err);
      }
    }
  }

  /**
   * Runs `fn` in one write transaction (READ COMMITTED; claims lock their
   * rows), stamping versions at its end (see above); retried from the start
   * on a deadlock or a serialization failure, so `fn` must only write through `t`.
   */
  async tx<T>(fn: (t: Tx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      // Run again after close() cut its connection (below): the pool is
      // ending, and its error would say nothing of the change not made.
      if (attempt > 1 && this.closing)
        throw new UserError(
          `PostgreSQL state database ${this.location}: the store was being closed while a change was made, so the change was not made. Do it again.`,
          3,
        );
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (err) {
        throw this.explain(err);
      }
      this.writing.add(client);
      // The server ending the session mid-transaction fails the query in
      // flight, handled below (the event itself is heard by Tracked).
      const jobs = new Set<string>();
      const todos = new Map<string, [string, string]>();
      const t: Tx = {
        q: async <R>(sql: string, params: readonly Param[] = []) =>
          (await client.query(sql, params as unknown[])).rows as R[],
        one: async <R>(sql: string, params: readonly Param[] = []) =>
          (await client.query(sql, params as unknown[])).rows[0] as R | undefined,
        many: async (sqls) =>
          sqls.length === 0
            ? []
            : rowsOfEach(
                (await client.query(sqls.join(';\n'))) as unknown as pg.QueryResult | pg.QueryResult[],
                sqls.length,
              ),
        stampJob: (id) => void jobs.add(id),
        stampTodo: (repo, id) => void todos.set(`${repo}\0${id}`, [repo, id]),
      };
      let broken: unknown = null;
      let committing = false;
      try {
        await client.query('BEGIN');
        const out = await fn(t);
        // Before the version is taken: the texts are the slow part, and meta's lock is held to COMMIT.
        if (jobs.size > 0 && this.beforeCommit) await this.beforeCommit(t, [...jobs]);
        committing = true;
        // The new version, its notice to every listener (delivered at COMMIT),
        // the stamps and the COMMIT, sent as one message: meta's row is
        // locked from the bump to COMMIT, and every other writer waits on it.
        // Sent a statement at a time, the lock was held across round trips,
        // each waiting for this process to get a core again: a runner at its
        // jobs' nice value, or at the floor as it starts, held every writer
        // (bench/shared-store.bench.js: 1,954 bumps waited 19.3 s in all).
        // An error in the bump skips the COMMIT after it (the catch rolls back).
        await client.query(versionCommit([...jobs], [...todos.values()]));
        return out;
      } catch (err) {
        if (connectionLost(err)) {
          broken = err;
          // Before COMMIT the server rolled the transaction back with the
          // session: nothing was written, so it runs again, on a new connection.
          if (!committing && attempt < 4) continue;
          if (committing)
            throw new UserError(
              `PostgreSQL state database ${this.location}: the connection was lost while a change was being committed, so it may or may not have been made (${scrubDbUrl((err as Error).message, this.url)}).\nLook at what it was about (ii job show, ii todo list) before doing it again.`,
              3,
            );
          throw this.explain(err);
        }
        try {
          await client.query('ROLLBACK');
        } catch (e) {
          broken = e;
        }
        const code = (err as { code?: string }).code;
        if (code && RETRY.has(code) && attempt < 5) continue;
        throw this.explain(err);
      } finally {
        // A connection that could not roll back is dropped, not reused.
        this.writing.delete(client);
        client.release(broken ? (broken as Error) : undefined);
      }
    }
  }

  /**
   * Calls `onVersion` with each store version as its transaction commits
   * (LISTEN/NOTIFY on a connection of its own: no polling). When that
   * connection is lost it connects again (waiting up to 2 s between tries)
   * and then calls `onVersion` with the current version: a reader that reads
   * what changed after the last version it saw (listChangedAfter) so misses
   * nothing that was written while it was away. The returned function stops it.
   */
  async listen(onVersion: (version: number) => void): Promise<() => Promise<void>> {
    return this.listenTo(
      CHANNEL,
      (payload) => onVersion(Number(payload)),
      async () => {
        const v = await this.one<{ value: number }>("SELECT value FROM meta WHERE key = 'version'");
        if (v) onVersion(v.value);
      },
    );
  }

  /**
   * LISTENs on `channel` on a connection of its own, calling `onNotice` with
   * each notice's payload; when that connection is lost it connects again
   * (waiting up to 2 s between tries) and then calls `onBack`, so the
   * listener reads what it may have missed. The returned function stops it.
   *
   * One connection listens at a time: a reconnect whose `onBack` fails ends
   * the connection it made before making the next (two would deliver each
   * notice twice, and stop would end only the last), and stopping ends a
   * connection still being made and waits for the reconnect to settle (a
   * connection made after it would keep the process from exiting).
   */
  async listenTo(
    channel: string,
    onNotice: (payload: string) => void,
    onBack: () => Promise<void>,
  ): Promise<() => Promise<void>> {
    let stopped = false;
    let client: pg.Client | null = null;
    /** A connection being made, for stop to end. */
    let connecting: pg.Client | null = null;
    /** Connections ended on purpose (replaced, failed to connect, stopped): their notices and their end are not heard. */
    const retired = new WeakSet<pg.Client>();
    const retire = async (c: pg.Client): Promise<void> => {
      retired.add(c);
      // Bounded: a server that stopped answering never closes its end.
      const t = cutSoon(c);
      await c.end().catch(() => {});
      clearTimeout(t);
    };
    let wait = 50;
    const connect = async (): Promise<pg.Client> => {
      const c = new pg.Client({ connectionString: this.url, types, application_name: 'incrementum-listen' });
      c.on('notification', (n) => {
        if (!retired.has(c) && n.channel === channel && n.payload) onNotice(n.payload);
      });
      c.on('error', () => {}); // 'end' follows: reconnect there
      c.once('end', () => {
        if (stopped || retired.has(c)) return;
        if (client === c) client = null;
        void again();
      });
      connecting = c;
      try {
        await c.connect();
        await c.query(`LISTEN ${channel}`);
      } catch (err) {
        await retire(c);
        throw err;
      } finally {
        connecting = null;
      }
      return c;
    };
    let reconnecting: Promise<void> | null = null;
    /** The reconnect is in onBack: its read is the pool's (close() ends it), and stop does not wait for it. */
    let backing = false;
    const again = (): Promise<void> =>
      (reconnecting ??= reconnect().finally(() => {
        reconnecting = null;
      }));
    // The wait between tries: it keeps the process alive (a follower's only
    // work may be this), and stopping cuts it short.
    let wake: (() => void) | null = null;
    const sleep = (ms: number) =>
      new Promise<void>((r) => {
        const t = setTimeout(r, ms);
        wake = () => {
          clearTimeout(t);
          r();
        };
      }).finally(() => {
        wake = null;
      });
    const reconnect = async (): Promise<void> => {
      while (!stopped) {
        await sleep(wait);
        wait = Math.min(wait * 2, 2000);
        if (stopped) return;
        let c: pg.Client;
        try {
          c = await connect();
        } catch {
          continue; // still away: try again
        }
        if (stopped) {
          await retire(c);
          return;
        }
        client = c;
        wait = 50;
        try {
          backing = true;
          await onBack();
          // Lost again while reading: its end came while this loop ran, so it goes round once more.
          if (client === c) return;
        } catch {
          // The read failed (the connection lost again, most often): this
          // connection is ended, not left listening beside the next one.
          if (client === c) client = null;
          await retire(c);
        } finally {
          backing = false;
        }
      }
    };
    try {
      client = await connect();
    } catch (err) {
      throw this.explain(err);
    }
    return async () => {
      stopped = true;
      (wake as (() => void) | null)?.();
      // A connection still being made is cut, not ended politely: a server
      // that does not answer (a host gone from the network) would hold that.
      const pending = connecting as pg.Client | null;
      if (pending) {
        retired.add(pending);
        pending.connection.stream.destroy();
      }
      // Its catch-up read may wait on a lock or a server that stopped
      // answering, as long as that lasts: stopping waits for the connection
      // being made, not for that read (PgDb.close() cuts it).
      if (!backing) await reconnecting;
      const c = client as pg.Client | null;
      client = null;
      if (c) await retire(c);
    };
  }

  /** `version`, or a UserError when this build cannot work on it (newer, or older than any it migrates). */
  private checkedVersion(version: number): number {
    if (version > PG_SCHEMA_VERSION)
      throw new UserError(
        `PostgreSQL state database ${this.location} has schema version ${version}, newer than this build of incrementum knows (${PG_SCHEMA_VERSION}).\n` +
          'It was left untouched. Upgrade incrementum on this machine (git pull && npm install) to the version the other machines run.',
        3,
      );
    if (version > 0 && version < PG_BASELINE)
      throw new UserError(
        `PostgreSQL state database ${this.location} has schema version ${version}, older than any this build can migrate (${PG_BASELINE}).\nIt was left untouched.`,
        3,
      );
    return version;
  }

  /**
   * Checks the schema version and applies the migrations it lacks (under an
   * advisory lock). The lock is taken only for a migration: every process
   * opening the store (each runner, each board) took it before, one at a
   * time, each holding it across its round trips, at its own priority
   * (bench/shared-store.bench.js: 79 opens waited 0.8 to 1.4 s for it in
   * all). A current schema stays current (migrations only go forward), so
   * reading it without the lock is enough.
   */
  async migrate(): Promise<void> {
    // Each step is its own transaction and the lock goes with its session:
    // one cut by a lost connection wrote nothing, and is read again whole.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.withClient((client) => this.migrateOn(client));
      } catch (err) {
        if (connectionLost(err) && attempt < 3) continue;
        throw this.explain(err);
      }
    }
  }

  private async migrateOn(client: pg.PoolClient): Promise<void> {
    if (this.checkedVersion(await schemaVersion(client)) === PG_SCHEMA_VERSION) return;
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      // Read again under the lock: another process may have migrated meanwhile.
      let version = this.checkedVersion(await schemaVersion(client));
      while (version < PG_SCHEMA_VERSION) {
        const next = version === 0 ? PG_BASELINE : version + 1;
        await client.query('BEGIN');
        try {
          await client.query(PG_MIGRATIONS[next - PG_BASELINE] as string);
          await client.query(
            "INSERT INTO meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [next],
          );
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
        version = next;
      }
    } finally {
      // Not caught: a connection that could not say it is either lost (its
      // lock went with it) or must not go back to the pool still holding it.
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  }

  /**
   * Runs `fn` on a connection of the pool, given back after. After an
   * error, thrown by `fn` or emitted by the connection while it was out
   * (the server ended its session), it is dropped, not given back: lost, or
   * in a state `fn` did not finish with (a transaction, the migration lock)
   * that the pool would hand to the next caller. Errors come as they are
   * (not explained).
   */
  async withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let failed: Error | undefined;
    const heard = (err: Error) => void (failed ??= err);
    client.on('error', heard);
    try {
      return await fn(client);
    } catch (err) {
      failed ??= err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      client.off('error', heard);
      client.release(failed);
    }
  }

  /**
   * Runs `fn` in one transaction, opened with `begin`, on a connection of
   * its own (withClient): committed after it, rolled back if it throws;
   * errors explained. For a transaction that is not a store write, which
   * tx() is for (it bumps the version, and runs a write again): a copy's.
   */
  async inTransaction<T>(begin: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await this.withClient(async (client) => {
        await client.query(begin);
        try {
          const out = await fn(client);
          await client.query('COMMIT');
          return out;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
      });
    } catch (err) {
      throw this.explain(err);
    }
  }

  /**
   * Ends the pool. pool.end() waits for every connection checked out to be
   * given back, and the pool sets no query timeout: a read waiting on a lock
   * another session holds, or on a server that stopped answering, held it,
   * and with it a board quitting, for as long as that lasted (a reconnect's
   * catch-up read, say). What is still being asked is cancelled on the server
   * (so no backend is left waiting there) and its connection cut, so the
   * query fails and its connection goes.
   */
  async close(): Promise<void> {
    this.closing = true;
    const cutBusy = (writes: boolean) => {
      for (const c of this.clients)
        if (this.busy.has(c as pg.PoolClient)) {
          if (writes || !this.writing.has(c as pg.PoolClient)) this.cut(c as pg.PoolClient);
        }
        // Still being made (the pool waits for it): nothing to cancel yet.
        else if (!this.connected.has(c)) streamOf(c).destroy();
    };
    cutBusy(false);
    // A write under way (a board's action, pressed just before quitting)
    // commits in a few round trips: cut, it would be lost without a word. It
    // gets a moment; one waiting on a lock or a silent server is cut after it.
    const until = Date.now() + WRITE_GRACE_MS;
    while (this.writing.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    cutBusy(true);
    this.busy.clear();
    await this.pool.end();
    // The pool has ended its idle connections politely (Terminate, then
    // waiting for the server to close its end): a server that stopped
    // answering never does, and their sockets would keep the process alive.
    // Unref'd: a server that does close its end keeps nobody waiting.
    for (const c of this.clients) cutSoon(c).unref();
  }

  /** Cancels what `c` is asking (PostgreSQL's cancel request, on a connection of its own) and cuts `c`'s connection. */
  private cut(c: pg.PoolClient): void {
    const inner = c as unknown as {
      host: string;
      port: number;
      processID: number | null;
      secretKey: number | null;
    };
    if (inner.processID !== null && inner.secretKey !== null) {
      // The protocol's CancelRequest: length, code 80877102, the backend's pid and key.
      const msg = Buffer.alloc(16);
      msg.writeInt32BE(16, 0);
      msg.writeInt32BE(80877102, 4);
      msg.writeInt32BE(inner.processID, 8);
      msg.writeInt32BE(inner.secretKey, 12);
      const s = inner.host.startsWith('/')
        ? connect(`${inner.host}/.s.PGSQL.${inner.port}`)
        : connect(inner.port, inner.host);
      s.on('error', () => {});
      s.end(msg);
      // The server closes it once read; one that stopped answering never
      // does, so it is cut after a while, and keeps no process alive meanwhile.
      s.unref();
      setTimeout(() => s.destroy(), 2000).unref();
    }
    streamOf(c).destroy();
  }
}

/**
 * Cuts `c`'s socket in a moment (1 s) unless it has closed by then: ending a
 * connection politely waits for the server to close its end, which one that
 * stopped answering (SIGSTOP, a host gone from the network) never does.
 */
/** How long close() waits for write transactions under way to commit before cutting them. */
export const WRITE_GRACE_MS = 2000;

function cutSoon(c: pg.Client): NodeJS.Timeout {
  const stream = streamOf(c);
  return setTimeout(() => stream.destroy(), 1000);
}

/** The socket of `c` (pg keeps it on its connection). */
const streamOf = (c: pg.Client): { destroy(): void } =>
  (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream;

/** The database's schema version: 0 for an empty database; refused when it holds other tables and no incrementum schema. */
async function schemaVersion(client: pg.PoolClient): Promise<number> {
  const meta = (await client.query("SELECT to_regclass('meta') IS NOT NULL AS present")).rows[0] as {
    present: boolean;
  };
  if (!meta.present) return 0;
  const row = (await client.query("SELECT value FROM meta WHERE key = 'schema_version'")).rows[0] as
    { value: number } | undefined;
  if (!row)
    throw new UserError(
      "the database holds a table named meta that is not incrementum's (no schema_version): point II_DATABASE_URL at a database of its own.",
      3,
    );
  return row.value;
}

/**
 * Whether `err` is a lost connection (the server ended the session, the
 * socket closed) rather than an answer: what was open of a transaction on it
 * was rolled back by the server.
 */
export function connectionLost(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (/^08/.test(code) || ['57P01', '57P02', '57P03', 'ECONNRESET', 'EPIPE'].includes(code)) return true;
  return /Connection terminated|terminating connection|connection error/i.test(String(e.message ?? ''));
}

/** `$1, $2, …` from `from` on, for `n` parameters. */
export const placeholders = (n: number, from = 1): string =>
  Array.from({ length: n }, (_, i) => `$${from + i}`).join(', ');
