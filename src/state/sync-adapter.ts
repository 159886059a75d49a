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

/**
 * `store` behind the asynchronous API; closing it closes `store`. Each of its
 * stores is wrapped on first use, as openStateStore makes them (index.ts).
 */
export function asyncStore(store: StateStore): AsyncStateStore {
  const lazy = <T extends object>(get: () => T): (() => Promised<T>) => {
    let out: Promised<T> | undefined;
    return () => (out ??= promised(get()));
  };
  const todos = lazy(() => store.todos);
  const jobs = lazy(() => store.jobs);
  const control = lazy(() => store.control);
  const asks = lazy(() => store.asks);
  const sessions = lazy(() => store.sessions);
  const workspaces = lazy(() => store.workspaces);
  const processGroups = lazy(() => store.processGroups);
  const runners = lazy(() => store.runners);
  const logs = lazy(() => store.logs);
  return {
    driver: 'sqlite',
    dir: store.dir,
    location: store.dbPath,
    get todos() {
      return todos();
    },
    get jobs() {
      return jobs();
    },
    get control() {
      return control();
    },
    get asks() {
      return asks();
    },
    get sessions() {
      return sessions();
    },
    get workspaces() {
      return workspaces();
    },
    get processGroups() {
      return processGroups();
    },
    get runners() {
      return runners();
    },
    freeReserve: () => store.freeReserve(),
    get logs() {
      return logs();
    },
    close: async () => store.close(),
  };
}
