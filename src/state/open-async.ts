// Opens the store of record behind the asynchronous API: PostgreSQL when a
// URL is given (II_DATABASE_URL), else the local SQLite file. The PostgreSQL
// driver (and its client library) is loaded only then, so the commands that
// use SQLite start no slower for it.
import type { AsyncStateStore } from './async-api.js';
import { openStateStore } from './index.js';
import { configuredStoreUrl } from './store-url.js';
import { asyncStore } from './sync-adapter.js';

export interface OpenAsyncOptions {
  /** The local state folder (event logs, transcripts; the SQLite file when no URL). */
  dir?: string;
  /** A PostgreSQL URL; absent: II_DATABASE_URL from `env`, else [state] url in the user's config; empty: SQLite. */
  url?: string | null;
  env?: NodeJS.ProcessEnv;
  reserve?: boolean;
  /** SQLite: check the whole file when opening it (sqlite/db.ts). */
  integrityCheck?: boolean;
  /** SQLite: read the file through a memory map (sqlite/db.ts OpenOptions.mapped). */
  mapped?: boolean;
}

/** The URL the store is to use, or null for SQLite: II_DATABASE_URL, else [state] url in the user's config. */
export function databaseUrl(opts: OpenAsyncOptions = {}): string | null {
  if (opts.url !== undefined) return opts.url && opts.url.trim() ? opts.url.trim() : null;
  return configuredStoreUrl(opts.env ?? process.env)?.url ?? null;
}

export async function openAsyncStateStore(opts: OpenAsyncOptions = {}): Promise<AsyncStateStore> {
  const url = databaseUrl(opts);
  if (url === null)
    return asyncStore(
      openStateStore({
        dir: opts.dir,
        reserve: opts.reserve,
        integrityCheck: opts.integrityCheck,
        mapped: opts.mapped,
      }),
    );
  const { openPgStore } = await import('./pg/index.js');
  return openPgStore(url, { dir: opts.dir });
}
