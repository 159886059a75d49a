// What the store of record's connection leaves in the environment, kept from
// every process a job starts for the agent (the agent itself, the setup, the
// tests, a landing's tests), sandboxed or not. Those run code the agent wrote:
// with the URL or the password they could connect to the shared PostgreSQL
// and forge a review, mark their job completed or edit the backlog, or write
// the password into a file that the ref pusher then pushes. Nothing a job
// starts needs them (incrementum's own processes outside it keep them), and
// no config passes them back in: not [agent.env], not [sandbox] pass-env.

/**
 * The names removed: the URL, and the libpq variables that carry a
 * credential or name a file or service that holds one (the `pg` client and
 * psql both read them). PGHOST, PGPORT, PGUSER and PGDATABASE stay: they are
 * no secret (an agent can guess localhost:5432 as well), and a project's own
 * tests may use them for their database; without a password or a password
 * file (~/.pgpass is hidden in the sandbox too) they reach nothing a server
 * asks a password for.
 */
export const STORE_CREDENTIAL_ENV = [
  'II_DATABASE_URL',
  'PGPASSWORD',
  'PGPASSFILE',
  'PGSERVICE',
  'PGSERVICEFILE',
  'PGSYSCONFDIR', // where pg_service.conf is looked for
  'PGSSLKEY', // a client certificate's key logs in as well as a password
  'PGSSLCERT',
] as const;

const REMOVED: ReadonlySet<string> = new Set(STORE_CREDENTIAL_ENV);

export const isStoreCredentialEnv = (name: string): boolean => REMOVED.has(name);

/** `env` without the store's URL and credentials (STORE_CREDENTIAL_ENV). */
export function withoutStoreCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!REMOVED.has(k)) out[k] = v;
  return out;
}
