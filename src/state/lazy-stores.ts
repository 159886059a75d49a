// The nine stores a state store holds, each made on first use. Making one
// costs: SQLite's prepares its statements (reading the schema pages), and a
// command uses a few of the nine (ii job list --json: the jobs alone; making
// all nine was ~1.4 ms of its start). The SQLite store (index.ts) and its
// asynchronous face (sync-adapter.ts) both hand theirs out through this.

/** The stores' names, as the store interfaces (api.ts, async-api.ts) spell them. */
export const STORE_NAMES = [
  'todos',
  'jobs',
  'control',
  'asks',
  'sessions',
  'workspaces',
  'processGroups',
  'runners',
  'logs',
] as const;

export type StoreName = (typeof STORE_NAMES)[number];

/**
 * `fields` with a getter for each store that calls `make(name)` the first
 * time it is read and returns that store every time after. The getters are
 * defined on `fields` itself (a spread would read them, making all nine).
 */
export function withLazyStores<F extends object, S extends Record<StoreName, object>>(
  fields: F,
  make: <K extends StoreName>(name: K) => S[K],
): F & S {
  for (const name of STORE_NAMES) {
    let store: S[typeof name] | undefined;
    Object.defineProperty(fields, name, {
      get: () => (store ??= make(name)),
      enumerable: true,
      configurable: true,
    });
  }
  return fields as F & S;
}
