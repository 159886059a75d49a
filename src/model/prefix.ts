// Id prefixes: what a user may type for an id, and what the CLI highlights.

/** Length of the shortest prefix of `id` that no other id in `all` shares (at least `min`). */
export function shortestUniquePrefix(id: string, all: readonly string[], min = 1): number {
  let len = min;
  for (const other of all) {
    if (other === id) continue;
    let common = 0;
    while (common < id.length && common < other.length && id[common] === other[common]) common++;
    len = Math.max(len, common + 1);
  }
  return Math.min(len, id.length);
}

export type PrefixMatch<T> = { kind: 'one'; item: T } | { kind: 'none' } | { kind: 'many'; items: T[] };

/** Exact id wins; otherwise the items whose id starts with the prefix. */
export function matchPrefix<T>(items: readonly T[], prefix: string, idOf: (t: T) => string): PrefixMatch<T> {
  const p = prefix.trim().toLowerCase();
  const exact = items.find((t) => idOf(t) === p);
  if (exact) return { kind: 'one', item: exact };
  const found = p.length === 0 ? [] : items.filter((t) => idOf(t).startsWith(p));
  if (found.length === 1) return { kind: 'one', item: found[0] as T };
  return found.length === 0 ? { kind: 'none' } : { kind: 'many', items: found };
}
