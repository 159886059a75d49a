// The asynchronous store API (async-api.ts) served by the synchronous SQLite
// store: each call runs as it does today and its result (or its error) comes
// back as a settled Promise. Nothing waits on anything: node:sqlite has no
// asynchronous calls, and a write still takes SQLite's lock for its own
// transaction, as every caller of the synchronous API does.
import type { StateStore } from './api.js';
import type { AsyncStateStore, Promised } from './async-api.js';
import { withLazyStores, type StoreName } from './lazy-stores.js';

function promised<T extends object>(store: T): Promised<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(store))
    out[k] =
      typeof v === 'function'
        ? (...args: unknown[]) => {
            try {
              return Promise.resolve((v as (...a: unknown[]) => unknown).apply(store, args));
            } catch (err) {
              return Promise.reject(err as Error);
            }
          }
        : v;
  return out as Promised<T>;
}

/**
 * `store` behind the asynchronous API; closing it closes `store`. Each of its
 * stores is wrapped on first use, as openStateStore makes them (index.ts).
 */
export function asyncStore(store: StateStore): AsyncStateStore {
  return withLazyStores<Omit<AsyncStateStore, StoreName>, AsyncStateStore>(
    {
      driver: 'sqlite',
      dir: store.dir,
      location: store.dbPath,
      freeReserve: () => store.freeReserve(),
      close: async () => store.close(),
    },
    // Promised<StateStore[K]> is AsyncStateStore[K] for each K (async-api.ts
    // defines them so), which TypeScript cannot see for a K not yet known.
    <K extends StoreName>(name: K) => promised(store[name]) as AsyncStateStore[K],
  );
}
