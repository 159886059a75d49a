// jobs.listShown: what `ii job list --json` prints, made of the listing texts
// judged clean as they were written (list_shown) and the others redacted and
// escaped; always shownJsonText(listJson), byte for byte, whatever the rows
// hold: a secret an agent wrote, a control character, a row an older build
// wrote with no verdict, a verdict reached under other rules.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { SHOWN_RULES, SHOWN_RULES_TEXT, shownJsonText } from '../../src/text/json.js';
import { makeTexts, storeTexts } from '../../src/state/sqlite/job-json.js';
import { tempDir } from '../helpers/tmp.js';

const KEY = `sk-ant-api03-${'A'.repeat(40)}`;
const CSI = '\u009b31m';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
let raw: DatabaseSync;
beforeEach(() => {
  tmp = tempDir();
  store = openStateStore({ dir: join(tmp.path, 'incrementum') });
  raw = new DatabaseSync(store.dbPath);
});
afterEach(() => {
  raw.close();
  store.close();
  tmp.cleanup();
});

const shown = (repo = 'r') => Buffer.from(store.jobs.listShown(repo)).toString('utf8');
const verdict = (id: string) =>
  (raw.prepare('SELECT list_shown FROM jobs WHERE id = ?').get(id) as { list_shown: number | null })
    .list_shown;

/** A job with `n` commits; `draft` gives each commit's message. */
function job(todo: string, n = 2, draft = (i: number) => `feat: step ${i}`): string {
  const j = store.jobs.create('r', { todo_id: todo });
  store.jobs.appendChange(j.id, `I${todo}`);
  for (let i = 0; i < n; i++)
    store.jobs.appendCommit(j.id, { commit_id: `${todo}${i}`.padEnd(40, '0'), draft_message: draft(i) });
  settle();
  return j.id;
}

/**
 * The job texts made (and judged) as a writer leaves them once it settles: a
 * listing on the writing connection makes those its writes left to be made
 * (state/sqlite/job-json.ts), as its timer does shortly after.
 */
const settle = () => void store.jobs.listJson('nobody');

describe('jobs.listShown', () => {
  it('is shownJsonText(listJson) byte for byte, with what agents wrote redacted and escaped', () => {
    const clean = job('clean');
    const inCommit = job('commit', 3, (i) => (i === 1 ? `feat: uses ${KEY}` : 'feat: ok'));
    const inOwn = job('own');
    store.jobs.setFeedback(inOwn, `the agent said token=${'x'.repeat(20)}`);
    const control = job('control', 1, () => `colour ${CSI}red`);
    const asking = job('ask');
    store.asks.open(asking, {
      tool_kind: 'execute',
      title: `curl -H "Authorization: Bearer ${'b'.repeat(30)}"`,
      command: null,
      paths: [],
      diff_preview: null,
      options: [],
    });
    const text = shown();
    expect(text).toBe(shownJsonText(store.jobs.listJson('r')));
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('x'.repeat(20));
    expect(text).not.toContain('b'.repeat(30));
    expect(text).not.toContain('\u009b');
    expect(text).toContain('[REDACTED]');
    expect(JSON.parse(text)).toHaveLength(5);
    // Judged as written: only the job with nothing to redact or escape is clean.
    expect(verdict(clean)).toBe(SHOWN_RULES);
    for (const id of [inCommit, inOwn, control, asking]) expect(verdict(id), id).toBeNull();
  });

  it("a job's verdict follows its commits': a secret in a later commit makes it unclean", () => {
    const id = job('later', 3);
    expect(verdict(id)).toBe(SHOWN_RULES);
    store.jobs.appendCommit(id, { commit_id: 'later9'.padEnd(40, '0'), draft_message: `oops ${KEY}` });
    settle();
    expect(verdict(id)).toBeNull();
    expect(shown()).not.toContain(KEY);
    expect(shown()).toBe(shownJsonText(store.jobs.listJson('r')));
  });

  it('texts are made outside the write lock and kept only if their job was not written since they were read', () => {
    const kept = (id: string) => ({
      job: (raw.prepare('SELECT list_json FROM jobs WHERE id = ?').get(id) as { list_json: string | null })
        .list_json,
      commits: (
        raw.prepare('SELECT list_json FROM commits WHERE job_id = ? ORDER BY change_seq, seq').all(id) as {
          list_json: string | null;
        }[]
      ).map((c) => c.list_json),
    });
    const id = job('raced', 2);
    const more = (n: number) =>
      store.jobs.appendCommit(id, { commit_id: `raced${n}`.padEnd(40, '0'), draft_message: `feat: ${n}` });
    // Read on another connection (as another process's making would), then the job written before they are kept.
    more(7);
    // Made while another process holds the write lock: the making takes none.
    const holder = new DatabaseSync(store.dbPath);
    holder.exec('BEGIN IMMEDIATE');
    let stale: ReturnType<typeof makeTexts>;
    try {
      stale = makeTexts(raw, [id]);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(stale.map((m) => m.id)).toEqual([id]);
    expect(stale[0]!.commits).toHaveLength(1);
    store.jobs.setFeedback(id, 'written after the read');
    storeTexts(raw, stale);
    expect(kept(id).job).toBeNull();
    expect(kept(id).commits.at(-1)).toBeNull();
    // Read and kept with no write between: kept, and what a listing builds afresh.
    more(8);
    storeTexts(raw, makeTexts(raw, [id]));
    const now = kept(id);
    expect(now.job).not.toBeNull();
    expect(now.commits.every((c) => c !== null)).toBe(true);
    expect(verdict(id)).toBe(SHOWN_RULES);
    expect(JSON.parse(now.job!)).toEqual(JSON.parse(JSON.stringify(store.jobs.get(id))));
    expect(store.jobs.listJson('r')).toBe(JSON.stringify(store.jobs.list('r')));
    expect(shown()).toBe(shownJsonText(store.jobs.listJson('r')));
  });

  it('rows with no verdict (an older build wrote them) or one under other rules are scanned', () => {
    job('a');
    const secret = job('b', 2, (i) => (i ? `feat: ${KEY}` : 'feat: ok'));
    const stale = job('c');
    // As migration 21 leaves the rows an older build wrote.
    raw.exec('UPDATE jobs SET list_shown = NULL; UPDATE commits SET list_shown = NULL');
    expect(shown()).toBe(shownJsonText(store.jobs.listJson('r')));
    expect(shown()).not.toContain(KEY);
    // A kept text with a secret in it, judged clean under other rules: scanned.
    raw
      .prepare(
        `UPDATE jobs SET list_json = replace(list_json, 'feat: step 0', ?), list_shown = ? WHERE id = ?`,
      )
      .run(`feat: ${KEY}`, SHOWN_RULES + 1, stale);
    expect(store.jobs.listJson('r')).toContain(KEY);
    expect(shown()).not.toContain(KEY);
    expect(shown()).toBe(shownJsonText(store.jobs.listJson('r')));
    // A job written again gets its verdict back, and its commits' (each judged as written).
    store.jobs.setStage(secret, 'reviewing');
    settle();
    expect(verdict(secret)).toBeNull();
    expect(shown()).toBe(shownJsonText(store.jobs.listJson('r')));
  });

  it('migration 21 judges the texts an older build kept: a finished job is shown from its verdict too', () => {
    const clean = job('old-clean');
    const secret = job('old-secret', 2, (i) => (i ? `feat: ${KEY}` : 'feat: ok'));
    store.jobs.finish(clean, 'completed');
    store.close();
    // The store as schema 20 left it: no verdict columns (and no index of migration 22).
    raw.exec(
      'DROP INDEX jobs_active; ALTER TABLE jobs DROP COLUMN list_shown; ALTER TABLE commits DROP COLUMN list_shown; PRAGMA user_version = 20',
    );
    store = openStateStore({ dir: join(tmp.path, 'incrementum') });
    expect(verdict(clean)).toBe(SHOWN_RULES);
    expect(verdict(secret)).toBeNull();
    const commits = raw.prepare('SELECT list_shown FROM commits WHERE job_id = ? ORDER BY seq').all(secret);
    expect(commits.map((c) => c.list_shown)).toEqual([SHOWN_RULES, null]);
    expect(shown()).not.toContain(KEY);
    expect(shown()).toBe(shownJsonText(store.jobs.listJson('r')));
  });

  it("trusts a verdict under today's rules: a text judged clean is copied, not scanned again", () => {
    const id = job('trusted');
    raw
      .prepare(`UPDATE jobs SET list_json = replace(list_json, 'feat: step 0', ?) WHERE id = ?`)
      .run(`feat: ${KEY}`, id);
    expect(verdict(id)).toBe(SHOWN_RULES);
    // What the store judged is what it shows: the verdict is why a listing skips the scan.
    expect(shown()).toContain(KEY);
  });

  it('a verdict does not stand for a text that is gone: a job with no kept text is built and scanned', () => {
    const id = job('gone', 2, (i) => (i ? `feat: ${KEY}` : 'feat: ok'));
    raw.exec('UPDATE commits SET list_shown = ' + SHOWN_RULES);
    raw.prepare('UPDATE jobs SET list_json = NULL, list_shown = ? WHERE id = ?').run(SHOWN_RULES, id);
    expect(shown()).not.toContain(KEY);
    expect(shown()).toBe(shownJsonText(store.jobs.listJson('r')));
  });

  it('a kept text that is not JSON stops the listing naming its job, quoting none of the text (it may hold a secret)', () => {
    const id = job('damaged');
    // A secret written as a bare token: the JSON parser's message quotes the text from there.
    raw
      .prepare('UPDATE jobs SET list_json = ?, list_shown = NULL WHERE id = ?')
      .run(`{"feedback":${KEY}}`, id);
    let message = '';
    try {
      shown();
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(`job ${id}'s record in the store is not valid JSON`);
    expect(message).not.toContain(KEY.slice(0, 6));
  });

  it('lists what listJson lists, filters included, and an empty list as []', () => {
    const done = job('done');
    job('active');
    store.jobs.finish(done, 'completed');
    for (const opts of [{}, { activeOnly: true }, { status: 'completed' as const }])
      expect(Buffer.from(store.jobs.listShown('r', opts)).toString(), JSON.stringify(opts)).toBe(
        shownJsonText(store.jobs.listJson('r', opts)),
      );
    expect(Buffer.from(store.jobs.listShown('nobody')).toString()).toBe('[]');
  });

  it('eachShown hands the listing over a job at a time, a job with no kept text built in its place', () => {
    const ids = ['one', 'two', 'three'].map((t) => job(t, 3, (i) => (i === 1 ? `feat: ${KEY}` : 'feat: ok')));
    raw.prepare('UPDATE jobs SET list_json = NULL WHERE id = ?').run(ids[1]!);
    const parts: string[] = [];
    store.jobs.eachShown('r', {}, (b) => parts.push(Buffer.from(b).toString('utf8')));
    // [, a job, ',', a job, ',', a job, ]: never the listing held whole.
    expect(parts).toHaveLength(7);
    expect(parts.filter((_, i) => i % 2 === 0)).toEqual(['[', ',', ',', ']']);
    const jobs = parts.filter((_, i) => i % 2 === 1).map((t) => (JSON.parse(t) as { id: string }).id);
    expect(jobs.sort()).toEqual([...ids].sort());
    expect(parts.join('')).not.toContain(KEY);
    expect(parts.join('')).toBe(shownJsonText(store.jobs.listJson('r')));
    const none: string[] = [];
    store.jobs.eachShown('nobody', {}, (b) => none.push(Buffer.from(b).toString('utf8')));
    expect(none.join('')).toBe('[]');
  });

  it("eachShown lends each job's text for the call only (freed once part returns); listShown copies them whole", () => {
    job('one', 3);
    job('two', 3);
    const kept: Uint8Array[] = [];
    const copies: string[] = [];
    store.jobs.eachShown('r', {}, (b) => {
      kept.push(b);
      copies.push(Buffer.from(b).toString('utf8'));
    });
    const texts = kept.filter((_, i) => i % 2 === 1);
    expect(texts).toHaveLength(2);
    // Freed: its memory is the next text's, not the garbage collector's to give back later.
    for (const t of texts) expect(t.byteLength).toBe(0);
    expect(copies.join('')).toBe(shownJsonText(store.jobs.listJson('r')));
    expect(shown()).toBe(copies.join(''));
  });

  it("the active jobs' runners (every listing's first question) are read from an index alone", () => {
    job('one');
    const plan = raw
      .prepare(
        "EXPLAIN QUERY PLAN SELECT id, todo_id, status, pid, host FROM jobs WHERE repo = ? AND status = 'active'",
      )
      .all('r')
      .map((r) => (r as { detail: string }).detail)
      .join('\n');
    expect(plan).toContain('COVERING INDEX jobs_active');
    expect(store.jobs.activeRunners('r')).toHaveLength(1);
  });

  it('a change to the rules comes with a new SHOWN_RULES: verdicts reached under the old ones are then not trusted', () => {
    // On a failure here: a redaction rule or an escape changed. Bump
    // SHOWN_RULES (text/json.ts) and put the new version and hash here.
    const hash = createHash('sha256').update(SHOWN_RULES_TEXT).digest('hex');
    expect({ version: SHOWN_RULES, hash }).toEqual({
      version: 1,
      hash: 'a4b764919fddf655b0f1dd35df5f529df96c7ccf5888518aa04fb51368b8d17e',
    });
  });
});
