// The JSON text of a job list, built by SQLite. `ii job list --json` on
// thousands of jobs spent most of its time making Job objects (tens of
// thousands of rows, a JSON.parse per stored JSON column) only to stringify
// them again; here SQLite writes the text directly, and each job's and each
// commit's text is kept in list_json, made shortly after the writes (below),
// so a listing only joins stored texts. A row with no text (an older build's,
// or one still to be made) is built on the fly.
//
// The texts are written from the same tables as the loader reads jobs with
// (job-codec.ts), so they are byte-identical to JSON.stringify of what `load`
// in jobs.ts returns: test/unit/job-json.test.ts compares the two on jobs that
// set every field.
//
// A write does not make its job's text (or its commit's) in its own
// transaction: it drops the text (list_json = NULL, which a listing builds on
// the fly, as for an older build's row) and the texts are made once for the
// writes of the next moment (settleJobTexts, TEXT_DELAY_MS after the
// first): read outside the write lock, then kept in a short transaction of
// their own. A runner writes its job 5-8 times in each burst of bookkeeping between
// agent turns and tests (stage, usage, session, commit, feedback, snapshot):
// making the text and its verdict on each write was ~6 ms of the runner's
// ~25 ms of CPU per iteration (bench/runner.bench.js), and only `ii job list
// --json` reads it. A listing on the writing connection, and its close, make
// the texts left pending first.
//
// Each text is also judged as it is made: whether `ii job list --json`
// shows it as it is, with no secret to redact and no control to escape
// (text/json.ts shownAsIs). The verdict is kept in list_shown as the rules'
// fingerprint (SHOWN_RULES), so a listing copies the texts found clean and
// sends only the others, and those judged under other rules or never, through
// shownJsonText. A commit's text is judged when it is written; a job's own
// part (its text with its commits left out) when the job's is, the job's
// verdict then being clean only if each of its commits' is: a mutation of a
// job with hundreds of iterations does not scan them all again.
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { UserError } from '../../errors.js';
import { SHOWN_RULES } from '../../text/json.js';
import { registerCodec, SHOW_FN, SHOWN_FN } from './codec.js';
import { statements, transaction } from './db.js';
import { COMMIT, commitsJson, JOB } from './job-codec.js';

/**
 * The SQL of the texts, made on first use: a listing of kept texts needs
 * none of it, and making it was a part of every command's start.
 */
const texts = lazy(() => {
  const job = JOB.json('j');
  // The job's text with each change's commits as [] (what its commits' verdicts do not answer for).
  const parts = job.split(commitsJson('ch'));
  if (parts.length !== 2) throw new Error("a job's listing text holds its commits once");
  const ownPart = parts.join("'[]'");
  return {
    job,
    /** The job aliased `j`'s text with its commits left out, which its own verdict judges. */
    ownPart,
    commit: COMMIT.json('c'),
  };
});

function lazy<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}

/** A job's text as shown: its kept text if found clean under today's rules, else `text` through shownJsonText (the job's id names it if that fails). */
const shown = (text: string): string =>
  `CASE WHEN list_shown = ${SHOWN_RULES} AND list_json IS NOT NULL THEN list_json ELSE ${SHOW_FN}(${text}, id) END`;

/**
 * JSON.stringify(load(where, params)) without making the objects: the jobs
 * matching `where` (a condition on `jobs`), newest first.
 */
export function jobsJson(db: DatabaseSync, where: string, params: SQLInputValue[]): string {
  settleJobTexts(db);
  // Usually every job has its stored text: join those, in a small statement
  // (preparing the one that builds texts costs a CLI call several ms).
  const kept = statements(db)(
    `SELECT count(*) - count(list_json) AS missing, '[' || COALESCE(group_concat(list_json, ','), '') || ']' AS json
     FROM (SELECT list_json FROM jobs WHERE ${where} ORDER BY started_at DESC, id)`,
  ).get(...params) as { missing: number; json: string };
  if (kept.missing === 0) return kept.json;
  registerCodec(db);
  const sql = `SELECT '[' || COALESCE(group_concat(COALESCE(j.list_json, ${texts().job}), ','), '') || ']' AS json
    FROM (SELECT * FROM jobs WHERE ${where} ORDER BY started_at DESC, id) j`;
  return (statements(db)(sql).get(...params) as { json: string }).json;
}

/**
 * What `ii job list --json` prints of the jobs matching `where`:
 * shownJsonText(jobsJson(...)) as UTF-8, made of the kept texts found clean
 * as they are, and the others redacted and escaped one by one (the same
 * text: JSON.stringify of an array joins its items' texts with commas).
 * Bytes (BLOBs), so the listing is never decoded into a JavaScript string
 * and encoded back on its way to stdout.
 */
export function jobsShown(db: DatabaseSync, where: string, params: SQLInputValue[]): Uint8Array {
  const parts: Buffer[] = [];
  // Lent for the call only (eachJobShown): each part is copied.
  eachJobShown(db, where, params, (b) => parts.push(Buffer.from(b)));
  return Buffer.concat(parts);
}

const OPEN = new Uint8Array([0x5b]); // [
const COMMA = new Uint8Array([0x2c]);
const CLOSE = new Uint8Array([0x5d]); // ]

/**
 * jobsShown's bytes handed to `part` in order, one job's text at a time with
 * the brackets and commas between, so `ii job list --json` writes them as
 * they come. Built whole (group_concat, then a copy as a BLOB, then one into
 * JavaScript), a listing of 1,000 jobs (5 MB) touched ~20 MB of fresh memory
 * in a process that lives 50 ms: ~5,700 page faults, 17 ms of system time.
 *
 * Each text is lent to `part` for the call only, and freed once it returns:
 * left to the garbage collector, the 1,000 texts of a listing were 5 MB of
 * fresh memory, ~800 of the command's 5,100 page faults (15 µs each on a
 * 2-core VM); freed, each next text reuses the last one's memory.
 */
export function eachJobShown(
  db: DatabaseSync,
  where: string,
  params: SQLInputValue[],
  part: (bytes: Uint8Array) => void,
): void {
  settleJobTexts(db);
  registerCodec(db);
  // Usually every job has its stored text: copy those, in a small statement
  // (preparing the one that builds texts costs a CLI call several ms); a row
  // an older build wrote, with none, is built on its own.
  const rows = statements(db)(
    `SELECT id, CAST(${shown('list_json')} AS BLOB) AS json FROM jobs WHERE ${where} ORDER BY started_at DESC, id`,
  ).iterate(...params) as Iterable<{ id: string; json: Uint8Array | null }>;
  part(OPEN);
  let first = true;
  for (const { id, json } of rows) {
    if (!first) part(COMMA);
    first = false;
    const text = wholeText(id, json ?? builtShown(db, id));
    part(text);
    free(text);
  }
  part(CLOSE);
}

/**
 * Gives `bytes`' memory back now, not at the next garbage collection: a
 * transferred ArrayBuffer is detached and its old store released. Only a
 * buffer the view covers whole (node:sqlite makes one per BLOB) is freed.
 */
function free(bytes: Uint8Array): void {
  const { buffer } = bytes;
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength)
    buffer.transfer(0);
}

/**
 * `text`, job `id`'s listing text, if it looks whole: `{"id":"<id>",` to `}`.
 * A kept text is copied as it is, unparsed (parsing 5 MB at every listing is
 * what the kept texts save), so one changed outside ii (state.db edited by
 * hand, damaged on disk) went into `ii job list --json` as it was, an exit 0
 * with JSON no reader could parse. Its ends are checked, not its whole: that
 * takes no time, and catches a text replaced or cut short.
 */
function wholeText(id: string, text: Uint8Array): Uint8Array {
  const head = `{"id":${JSON.stringify(id)},`;
  let ok = text.length > head.length && text[text.length - 1] === 0x7d;
  for (let i = 0; ok && i < head.length; i++) ok = text[i] === head.charCodeAt(i);
  if (ok) return text;
  throw new UserError(
    `job ${id}'s record in the store is not valid JSON (its listing text): it was changed outside ii, or damaged on disk, and cannot be listed; nothing was changed.\n` +
      `ii job show ${id} shows what can be read of it. Clearing the text (sqlite3 state.db: UPDATE jobs SET list_json = NULL WHERE id = '${id}') makes the next listing build it again from the job's record; ii doctor checks the store.`,
    3, // as a damaged store ends (StoreDamagedError)
  );
}

/** Job `id`'s text as shown, made from its rows (it has no kept text). */
function builtShown(db: DatabaseSync, id: string): Uint8Array {
  const sql = `SELECT CAST(${shown(`COALESCE(j.list_json, ${texts().job})`)} AS BLOB) AS json FROM jobs j WHERE j.id = ?`;
  return (statements(db)(sql).get(id) as { json: Uint8Array }).json;
}

/**
 * In a transaction that writes a commit of job `jobId` or its review, before
 * the job's touch: drops the commit's text, made with the job's (settleJobTexts).
 */
export function commitTextLater(db: DatabaseSync, jobId: string, changeSeq: number, seq: number): void {
  statements(db)('UPDATE commits SET list_json = NULL WHERE job_id = ? AND change_seq = ? AND seq = ?').run(
    jobId,
    changeSeq,
    seq,
  );
}

/** How long after a write its job's text is made: the writes of that span share one making. */
export const TEXT_DELAY_MS = 200;

/** The jobs on a connection whose texts its writes dropped, and the timer that makes them. */
interface Pending {
  ids: Set<string>;
  timer: ReturnType<typeof setTimeout> | null;
  /** How the making runs: through the connection's guard (state/index.ts), so a damaged store is not written. */
  run: (make: () => void) => void;
}
const pendingTexts = new WeakMap<DatabaseSync, Pending>();

function pendingOf(db: DatabaseSync): Pending {
  let p = pendingTexts.get(db);
  if (!p) pendingTexts.set(db, (p = { ids: new Set(), timer: null, run: (make) => make() }));
  return p;
}

/** Runs the making of the connection's pending texts through `run` (its guard's). */
export function guardJobTexts(db: DatabaseSync, run: (make: () => void) => void): void {
  pendingOf(db).run = run;
}

/**
 * In every transaction that changes job `id`, with `list_json = NULL` in its
 * UPDATE of the job: has the text made shortly after (settleJobTexts). The
 * text is never stale: until it is made, a listing builds it.
 */
export function jobTextLater(db: DatabaseSync, id: string): void {
  const p = pendingOf(db);
  p.ids.add(id);
  // unref: a process about to exit does not wait; its close makes them, and
  // a process that ends without closing leaves them to be built by listings.
  p.timer ??= setTimeout(() => settleJobTexts(db), TEXT_DELAY_MS).unref();
}

/**
 * Makes the texts this connection's writes dropped. One that cannot be made
 * now (a busy or damaged store, a full disk) stays NULL, which listings
 * build on the fly.
 *
 * Made in two steps, so the write lock is held only to store them: read
 * (makeTexts), then written in one short transaction (storeTexts; no store
 * version: no job changes) for each job whose record is still as read.
 * Made inside the write transaction, each making held the lock 14 ms on
 * average, and up to 86 ms when its process lost its core midway, while
 * every other process that writes the store waited: in
 * bench/handover.bench.js (--jobs 2), a runner between its todo and its
 * first prompt waited ~120 ms for the lock.
 */
export function settleJobTexts(db: DatabaseSync): void {
  const p = pendingTexts.get(db);
  if (!p || p.ids.size === 0) return;
  if (p.timer) clearTimeout(p.timer);
  p.timer = null;
  const ids = [...p.ids];
  p.ids.clear();
  if (!db.isOpen) return;
  try {
    p.run(() => storeTexts(db, makeTexts(db, ids)));
  } catch {
    // Tried again by the next write's timer, a listing here, or the close.
    for (const id of ids) p.ids.add(id);
  }
}

/**
 * Keeps the texts `made` (makeTexts) in one transaction, each job's only while
 * its record is as they were read: a write since dropped its text again, and
 * the writer makes it (its own pending texts), from what it wrote.
 */
export function storeTexts(db: DatabaseSync, made: Made[]): void {
  if (made.length === 0) return;
  const q = statements(db);
  transaction(
    db,
    () => {
      for (const m of made) {
        const now = q('SELECT changed_version AS v FROM jobs WHERE id = ?').get(m.id) as
          { v: number } | undefined;
        if (now?.v !== m.version) continue;
        for (const c of m.commits)
          q(
            'UPDATE commits SET list_json = ?, list_shown = ? WHERE job_id = ? AND change_seq = ? AND seq = ? AND list_json IS NULL',
          ).run(c.json, c.shown, m.id, c.change_seq, c.seq);
        q('UPDATE jobs SET list_json = ?, list_shown = ? WHERE id = ? AND list_json IS NULL').run(
          m.json,
          m.shown,
          m.id,
        );
      }
    },
    false,
  );
}

/** A job's texts as makeTexts read them, and the record version they were made from. */
export interface Made {
  id: string;
  version: number;
  json: string;
  shown: number | null;
  commits: { change_seq: number; seq: number; json: string; shown: number | null }[];
}

/**
 * The texts of jobs `ids` that have none, and of their commits that have
 * none, read in one snapshot (a read transaction: no lock a writer waits
 * on). Each is what the stored pieces make: a job's text takes a commit's
 * text where it is kept and makes it where not (commitsJson), so it is the
 * same text either way, and a mutation of a job with hundreds of iterations
 * makes only the new ones' texts. A job's verdict is its own part's, if each
 * of its commits' texts is clean, those kept (by their kept verdict) and
 * those made here (by theirs).
 */
export function makeTexts(db: DatabaseSync, ids: string[]): Made[] {
  registerCodec(db);
  const q = statements(db);
  const { job, commit, ownPart } = texts();
  const jobSql = `SELECT j.changed_version AS version, ${job} AS json,
      ${SHOWN_FN}(${ownPart}) IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM commits c WHERE c.job_id = j.id AND c.list_json IS NOT NULL AND c.list_shown IS NOT ${SHOWN_RULES}
      ) AS clean
    FROM jobs j WHERE j.id = ? AND j.list_json IS NULL`;
  const commitSql = `SELECT change_seq, seq, json, ${SHOWN_FN}(json) AS shown
    FROM (SELECT change_seq, seq, ${commit} AS json FROM commits c WHERE c.job_id = ? AND c.list_json IS NULL)`;
  const made: Made[] = [];
  db.exec('BEGIN');
  try {
    for (const id of ids) {
      const row = q(jobSql).get(id) as { version: number; json: string; clean: number } | undefined;
      if (!row) continue; // made meanwhile (a listing, another writer), or gone
      const commits = q(commitSql).all(id) as Made['commits'];
      const clean = row.clean === 1 && commits.every((c) => c.shown === SHOWN_RULES);
      made.push({ id, version: row.version, json: row.json, shown: clean ? SHOWN_RULES : null, commits });
    }
  } finally {
    db.exec('COMMIT'); // a read: nothing to keep or undo
  }
  return made;
}
