// What every process a job starts for the agent (agent, setup, tests) loses
// of the environment, sandboxed or not: the store's URL and credentials.
import { describe, expect, it } from 'vitest';
import { STORE_CREDENTIAL_ENV, withoutStoreCredentials } from '../../src/proc/child-env.js';

describe('withoutStoreCredentials', () => {
  it('removes II_DATABASE_URL and the libpq credentials, keeps the rest', () => {
    const env = {
      PATH: '/bin',
      II_DATABASE_URL: 'postgres://ii:hunter2@db/x',
      PGPASSWORD: 'hunter2',
      PGPASSFILE: '/home/u/.pgpass',
      PGSERVICE: 'ii',
      PGSERVICEFILE: '/home/u/svc',
      PGSYSCONFDIR: '/etc/pg',
      PGSSLKEY: '/k',
      PGSSLCERT: '/c',
      PGHOST: 'db',
      PGUSER: 'ii',
      GITHUB_TOKEN: 't',
    };
    const out = withoutStoreCredentials(env);
    expect(out).toEqual({ PATH: '/bin', PGHOST: 'db', PGUSER: 'ii', GITHUB_TOKEN: 't' });
    for (const k of STORE_CREDENTIAL_ENV) expect(out[k], k).toBeUndefined();
    // The caller's object is left as it was (process.env itself is passed).
    expect(env.II_DATABASE_URL).toBe('postgres://ii:hunter2@db/x');
  });
});
