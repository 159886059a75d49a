// The asynchronous store API (async-api.ts) served by the synchronous SQLite
// store: each call runs as it does today and its result (or its error) comes
// back as a settled Promise. Nothing waits on anything: node:sqlite has no
// asynchronous calls, and a write still takes SQLite's lock for its own
// transaction, as every caller of the synchronous API does.
import type { StateStore } from './api.js';
import type { AsyncStateStore, Promised } from './async-api.js';

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

/** `store` behind the asynchronous API; closing it closes `store`. */
export function asyncStore(store: StateStore): AsyncStateStore {
  return {
    driver: 'sqlite',
    dir: store.dir,
    location: store.dbPath,
    todos: promised(store.todos),
    jobs: promised(store.jobs),
    control: promised(store.control),
    asks: promised(store.asks),
    sessions: promised(store.sessions),
    workspaces: promised(store.workspaces),
    processGroups: promised(store.processGroups),
    runners: promised(store.runners),
    freeReserve: () => store.freeReserve(),
    logs: promised(store.logs),
    close: async () => store.close(),
  };
}
