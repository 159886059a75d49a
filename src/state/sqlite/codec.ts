// Field kinds for describing a model object's storage once. Each entry of a
// table says where one field of the model lives and gives both readings of
// it from that one place: the model's value from a row (what a load returns)
// and the SQL that writes the same value as JSON text (the listing texts,
// job-json.ts), and, for a plain column, the value a writer stores. A table
// is typed against the model, so a field added to the model does not compile
// until it has its entry, and its two readings cannot drift apart.
//
// The JSON text must be byte-identical to JSON.stringify of what read()
// returns: keys in the table's order (read() builds objects in that order
// too), values as JavaScript prints them:
// - json_quote() escapes strings exactly as JSON.stringify does (checked over
//   every code point in test/unit/job-json.test.ts), and prints NULL as null
//   and integers as integers.
// - A `stored` column holds JSON.stringify output, which JSON.parse +
//   JSON.stringify gives back unchanged, so it is spliced in as stored.
// - A cost column holds whole micro-dollars, and the model's cost is dollars,
//   which SQLite would print as 0.0 and 17 digits where JavaScript prints 0
//   and the shortest round-trip form, so it goes through a JavaScript function
//   registered on the connection (registerCodec).
import type { DatabaseSync, SQLInputValue, SQLOutputValue } from 'node:sqlite';
import { UserError } from '../../errors.js';
import { fromMicros } from '../../model/usage.js';
import { SHOWN_RULES, shownAsIs, shownJsonText } from '../../text/json.js';

export type Row = Record<string, SQLOutputValue>;

/** One field of a model object, compiled for its key. */
interface Field<V, X> {
  /** The columns of the row it reads. */
  cols: readonly string[];
  /** The model's value from a row; `extra` holds what the loader put together from other rows. */
  read(row: Row, extra: X): V;
  /** SQL giving the value's JSON text, the row's table aliased `a`. */
  json(a: string): string;
  /** An optional key's condition (SQL): the key is left out, not null, when it is false. */
  when?(a: string): string;
  /** The one column a writer stores the value in, and the stored form; absent for derived fields. */
  write?: { col: string; encode(v: V): SQLInputValue; fallback(): V };
}

/** A field kind: compiled for the key it is given in a table (its default column name). */
export type Spec<V, X = unknown> = (key: string) => Field<V, X>;

export interface Table<T, X> {
  /** Every column the fields read, for a select list. */
  readonly cols: readonly string[];
  read(row: Row, extra: X): T;
  /** SQL for the JSON text of the row aliased `a`. */
  json(a: string): string;
  /** The model keys a writer stores, each with its column and stored form. */
  readonly writes: readonly {
    key: keyof T & string;
    col: string;
    encode(v: unknown): SQLInputValue;
    /** What a writer stores when it is given none (the model's default: test/unit/job-json.test.ts). */
    fallback(): unknown;
  }[];
}

/** A table for model type T: one entry per key, in the order the JSON text has them. */
export function table<T, X = unknown>(fields: { [K in keyof T]-?: Spec<T[K], X> }): Table<T, X> {
  const compiled = Object.entries(fields as Record<string, Spec<unknown, X>>).map(
    ([key, spec]) => [key, spec(key)] as const,
  );
  const cols = [...new Set(compiled.flatMap(([, f]) => f.cols))];
  // The reader sets each key by name (o["id"] = …), in code made once per
  // table: V8 turns an object given more than a dozen properties by keyed
  // store (o[key] = …) into a dictionary, and a job (27 keys and more) read so took
  // 2.4× the memory of one with the shape every job shares (the dashboard's
  // 10,000 jobs: 27 MB of heap against 11). The keys are the table's own.
  // Made on the first read: compiling it (Node's compile cache does not keep
  // code made at run time) for every table was a third of loading the store,
  // and ii job list --json reads no row into an object.
  const readers = compiled.map(([, f]) => f);
  let build: ((f: Field<unknown, X>[], row: Row, extra: X) => T) | null = null;
  const reader = () =>
    new Function(
      'f',
      'row',
      'extra',
      [
        'const o = {};',
        'let v;',
        ...compiled.map(
          ([key], i) => `v = f[${i}].read(row, extra); if (v !== undefined) o[${JSON.stringify(key)}] = v;`,
        ),
        'return o;',
      ].join('\n'),
    ) as (f: Field<unknown, X>[], row: Row, extra: X) => T;
  return {
    cols,
    read: (row, extra) => (build ??= reader())(readers, row, extra),
    json: (a) => object(compiled.map(([key, f]) => [key, f.json(a), f.when?.(a)])),
    writes: compiled.flatMap(([key, f]) => (f.write ? [{ key: key as keyof T & string, ...f.write }] : [])),
  } as Table<T, X>;
}

/**
 * A JSON object from [key, value] pairs, each value an SQL expression giving
 * the value's JSON text; a third element, a condition, makes the key optional
 * (absent, not null, when the condition is false). One concat() call, not a
 * chain of ||: each || copies the string built so far.
 */
function object(fields: [key: string, value: string, when?: string][]): string {
  const parts = fields.map(([k, v, when], i) => {
    const key = `'${i === 0 ? '{' : ','}"${k}":'`;
    if (when === undefined) return `${key}, ${v}`;
    if (i === 0) throw new Error('the first key of an object cannot be optional');
    return `CASE WHEN ${when} THEN ${key} || ${v} ELSE '' END`;
  });
  return `concat(${parts.join(', ')}, '}')`;
}

/**
 * A column read as it is: text, an integer or NULL (json_quote prints each as
 * JSON does); `fallback` is what a writer stores when given none.
 */
export const plain =
  <V extends string | number | null>(col?: string, fallback = null as V): Spec<V> =>
  (key) => {
    const c = col ?? key;
    return {
      cols: [c],
      read: (r) => r[c] as V,
      json: (a) => `json_quote(${a}.${c})`,
      write: { col: c, encode: (v) => v, fallback: () => fallback },
    };
  };

/** A text column read as never null: NULL (a row written before the column was filled) reads as ''. */
export const text =
  (col?: string): Spec<string> =>
  (key) => {
    const c = col ?? key;
    return {
      cols: [c],
      read: (r) => (r[c] as string | null) ?? '',
      json: (a) => `json_quote(COALESCE(${a}.${c}, ''))`,
      write: { col: c, encode: (v) => v, fallback: () => '' },
    };
  };

/** A 0/1 column as a boolean; NULL is null (a nullable flag: tests not run yet). */
export const flag =
  <V extends boolean | null>(col?: string): Spec<V> =>
  (key) => {
    const c = col ?? key;
    return {
      cols: [c],
      read: (r) => (r[c] == null ? null : r[c] === 1) as V,
      json: (a) => `CASE WHEN ${a}.${c} IS NULL THEN 'null' WHEN ${a}.${c} = 1 THEN 'true' ELSE 'false' END`,
      write: { col: c, encode: (v) => (v == null ? null : v ? 1 : 0), fallback: () => null as V },
    };
  };

/**
 * A column holding the value as JSON.stringify wrote it; NULL reads as
 * `fallback()` (a fresh value each time: callers may change what they load).
 */
export const stored =
  <V>(fallback: () => V, col?: string): Spec<V> =>
  (key) => {
    const c = col ?? key;
    const text = JSON.stringify(fallback()).replaceAll("'", "''");
    return {
      cols: [c],
      read: (r) => (r[c] == null ? fallback() : parseStored<V>(r, c)),
      json: (a) => `COALESCE(${a}.${c}, '${text}')`,
      write: { col: c, encode: (v) => (v == null ? null : JSON.stringify(v)), fallback },
    };
  };

/**
 * A stored column's value. One that is not JSON (state.db edited by hand,
 * damaged on disk) names its job and the column, and says what to do: a bare
 * SyntaxError ended `ii job list`, `ii job show` and the board as an internal
 * error, with no word of which job or what to do.
 */
function parseStored<V>(r: Row, c: string): V {
  try {
    return JSON.parse(r[c] as string) as V;
  } catch (err) {
    // Every row with a stored column is a job's or names its job (commits, asks).
    const id = String(r.job_id ?? r.id);
    throw new UserError(
      `job ${id}'s record in the store is not valid JSON (its ${c}: ${parseProblem(err)}): ` +
        'it was changed outside ii, or damaged on disk, and cannot be read; nothing was changed.\n' +
        // The same words for both drivers: PostgreSQL's rows come through here too.
        `Put back what was there (a copy of the store from before), or clear it (SET ${c} = NULL in the row of job ${id}: with sqlite3 on state.db, or psql on a shared PostgreSQL store; it then reads as empty), then run ii doctor.`,
      3, // as a damaged store ends (StoreDamagedError)
    );
  }
}

/**
 * What JSON.parse found wrong, without the piece of the text V8 quotes after
 * an unexpected token (`Unexpected token 'g', "ghp_BBBBBB"... is not valid
 * JSON`): the text is one redaction has not seen, and may hold a secret.
 */
function parseProblem(err: unknown): string {
  return (err as Error).message.replace(/,\s*(?:\.\.\.)?".*$/s, '');
}

const MICROS_FN = 'ii_js_dollars';
/** SQL functions of the listing texts' verdict (job-json.ts): ii_js_shown(text), ii_js_show(text, job id). */
export const SHOWN_FN = 'ii_js_shown';
export const SHOW_FN = 'ii_js_show';
const registered = new WeakSet<DatabaseSync>();

/** Registers the functions `dollars` fields' SQL calls; once per connection, before running it. */
export function registerCodec(db: DatabaseSync): void {
  if (registered.has(db)) return;
  db.function(MICROS_FN, { deterministic: true }, (x) => JSON.stringify(fromMicros(Number(x))));
  // A listing text's verdict (text/json.ts): SHOWN_RULES when it is shown as it is, else NULL.
  db.function(SHOWN_FN, { deterministic: true }, (x) =>
    typeof x === 'string' && shownAsIs(x) ? SHOWN_RULES : null,
  );
  // A listing text as shown, for one with no verdict under today's rules.
  // Redacting it parses it: a text that is not JSON (changed outside ii,
  // damaged on disk) names its job, or ii job list --json would end in a
  // bare SyntaxError after the jobs before it.
  db.function(SHOW_FN, { deterministic: true }, (x, id) => {
    if (typeof x !== 'string') return null;
    try {
      return shownJsonText(x);
    } catch (err) {
      throw new UserError(
        `job ${String(id)}'s record in the store is not valid JSON (${parseProblem(err)}): ` +
          'it was changed outside ii, or damaged on disk, and cannot be listed.\n' +
          `ii job show ${String(id)} shows what can be read of it; ii doctor checks the store.`,
        3, // as a damaged store ends (StoreDamagedError)
      );
    }
  });
  registered.add(db);
}

/** Whole micro-dollars in an integer column as the model's dollars (model/usage.ts). */
export const dollars =
  (col?: string): Spec<number> =>
  (key) => {
    const c = col ?? key;
    return { cols: [c], read: (r) => fromMicros(r[c] as number), json: (a) => `${MICROS_FN}(${a}.${c})` };
  };

/** An object whose fields are columns of the same row (a job's usage). */
export const nested =
  <V, X = unknown>(fields: { [K in keyof V]-?: Spec<V[K], X> }): Spec<V, X> =>
  () => {
    const t = table<V, X>(fields);
    return { cols: t.cols, read: t.read, json: t.json };
  };

/**
 * A value the loader puts together from other rows (a job's changes, a
 * commit's review), passed to read() in `extra` under the field's key;
 * `json` is the SQL that puts together the same, from the row aliased `a`.
 */
export const given =
  <V, X>(json: (a: string) => string): Spec<V, X> =>
  (key) => ({ cols: [], read: (_r, extra) => (extra as Record<string, V>)[key] as V, json });

/** An optional key, present when its column is neither NULL nor ''. */
export const optional =
  <V>(spec: Spec<V>): Spec<V | undefined> =>
  (key) => {
    const f = spec(key);
    const c = f.cols[0]!;
    return {
      ...f,
      read: (r, x) => (r[c] == null || r[c] === '' ? undefined : f.read(r, x)),
      when: (a) => `${a}.${c} IS NOT NULL AND ${a}.${c} <> ''`,
    };
  };

/**
 * A JSON array of `item` over the rows of `from` (a table and its alias)
 * matching `where`, in `order`. The order is the ordered subquery's: SQLite
 * runs it as a co-routine feeding group_concat row by row, in an index's order
 * here, where group_concat(... ORDER BY) would sort every built string again
 * (a third of the query's time).
 */
export const jsonArray = (item: string, table: string, alias: string, where: string, order: string): string =>
  `(SELECT '[' || COALESCE(group_concat(${item}, ','), '') || ']' FROM (SELECT * FROM ${table} WHERE ${where} ORDER BY ${order}) ${alias})`;
