// What `ii doctor` asks of a PostgreSQL store, changing nothing: can it
// connect (within a bounded time), and which schema version the database
// holds against the one this build knows. Errors as the driver words them
// (PgDb.explain): the URL redacted, the password scrubbed, what to check.
import pg from 'pg';
import { UserError } from '../../errors.js';
import { PgDb } from './db.js';
import { PG_SCHEMA_VERSION } from './migrations.js';

export interface PgProbe {
  /** The URL as it may be shown. */
  location: string;
  /** The server's version (SHOW server_version), when connected. */
  server?: string;
  /** The database's schema version: 0 for an empty database; null when not connected. */
  schema: number | null;
  /** The schema version this build knows. */
  known: number;
  /** Why it could not connect or read, as a user may be shown it. */
  error?: string;
}

export async function probePgStore(url: string, timeoutMs = 5000): Promise<PgProbe> {
  const db = new PgDb(url);
  const out: PgProbe = { location: db.location, schema: null, known: PG_SCHEMA_VERSION };
  let client: pg.Client | null = null;
  try {
    // In the try: the client reads the URL as it is made, and one it cannot read throws here.
    client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      application_name: 'incrementum doctor',
    });
    client.on('error', () => {});
    await client.connect();
    out.server = (
      (await client.query('SHOW server_version')).rows[0] as { server_version: string }
    ).server_version;
    const meta = (await client.query("SELECT to_regclass('meta') IS NOT NULL AS present")).rows[0] as {
      present: boolean;
    };
    if (!meta.present) out.schema = 0;
    else {
      const row = (await client.query("SELECT value FROM meta WHERE key = 'schema_version'")).rows[0] as
        { value: string | number } | undefined;
      if (!row)
        throw new UserError(
          "the database holds a table named meta that is not incrementum's (no schema_version): point the URL at a database of its own.",
        );
      out.schema = Number(row.value);
    }
  } catch (err) {
    const e = err as Error;
    out.error = /timeout/i.test(e.message ?? '')
      ? `PostgreSQL state database ${db.location}: no answer within ${timeoutMs / 1000} s.\nIs the host reachable from here (its name, a firewall, a VPN), and the server listening on that port?`
      : db.explain(err).message;
  } finally {
    await client?.end().catch(() => {});
    await db.close().catch(() => {});
  }
  return out;
}
