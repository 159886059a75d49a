// Opens the store of record behind the asynchronous API: PostgreSQL when a
// URL is given (II_DATABASE_URL), else the local SQLite file. The PostgreSQL
// driver (and its client library) is loaded only then, so the commands that
// use SQLite start no slower for it.
import type { AsyncStateStore } from './async-api.js';
import { openStateStore } from './index.js';
import { asyncStore } from './sync-adapter.js';

export interface OpenAsyncOptions {
  /** The local state folder (event logs, transcripts; the SQLite file when no URL). */
  dir?: string;
  /** A PostgreSQL URL; absent: II_DATABASE_URL from `env`; empty: SQLite. */
  url?: string | null;
  env?: NodeJS.ProcessEnv;
  reserve?: boolean;
  /** SQLite: check the whole file when opening it (sqlite/db.ts). */
  integrityCheck?: boolean;
}

/** The URL the store is to use, or null for SQLite. */
export function databaseUrl(opts: OpenAsyncOptions = {}): string | null {
  const url = opts.url !== undefined ? opts.url : (opts.env ?? process.env).II_DATABASE_URL;
  return url && url.trim() ? url.trim() : null;
}

export async function openAsyncStateStore(opts: OpenAsyncOptions = {}): Promise<AsyncStateStore> {
  const url = databaseUrl(opts);
  if (url === null)
    return asyncStore(
      openStateStore({ dir: opts.dir, reserve: opts.reserve, integrityCheck: opts.integrityCheck }),
    );
  const { openPgStore } = await import('./pg/index.js');
  return openPgStore(url, { dir: opts.dir });
}
