// A job's listing text is made once for the writes of a moment, not in each
// write's transaction (state/sqlite/job-json.ts): until it is made, the row
// has none and a listing from any connection builds it, byte for byte what
// is then kept.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { SHOWN_RULES } from '../../src/text/json.js';
import { tempDir, waitFor } from '../helpers/tmp.js';

const KEY = `sk-ant-api03-${'A'.repeat(40)}`;

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

const row = (id: string) =>
  raw.prepare('SELECT list_json, list_shown FROM jobs WHERE id = ?').get(id) as {
    list_json: string | null;
    list_shown: number | null;
  };
const shown = (s: StateStore) => Buffer.from(s.jobs.listShown('r')).toString('utf8');

/** A job as a runner's iteration writes it: a burst of writes. */
function burst(todo: string, draft = 'feat: a'): string {
  const j = store.jobs.create('r', { todo_id: todo });
  store.jobs.addAgentSession(j.id, { purpose: 'implement', id: `s-${todo}`, transcript: '/t.jsonl' });
  store.jobs.recordAgentUsage(j.id, `s-${todo}`, { input_tokens: 10, output_tokens: 2, cost: 0.01 });
  store.jobs.appendChange(j.id, `I${todo}`);
  store.jobs.appendCommit(j.id, { commit_id: 'c'.repeat(40), draft_message: draft });
  store.jobs.setFeedback(j.id, null);
  store.jobs.setStage(j.id, 'testing');
  return j.id;
}

it("leaves a burst of writes' text to be made once, shortly after; another process's listing meanwhile builds it", async () => {
  const id = burst('a');
  // Not made in the writes' transactions (each made it before: ~6 ms of a runner's iteration).
  expect(row(id).list_json).toBeNull();
  const other = openStateStore({ dir: join(tmp.path, 'incrementum') });
  try {
    const meanwhile = shown(other);
    expect(JSON.parse(meanwhile)).toHaveLength(1);
    // Made by the writer's timer, with no listing on its connection.
    const made = await waitFor(() => row(id).list_json, 'the job text to be made', 10_000);
    expect(row(id).list_shown).toBe(SHOWN_RULES);
    expect(made).toBe(JSON.stringify(store.jobs.list('r')[0]));
    // The kept text found clean is copied as it is: what the listing built before, byte for byte.
    expect(shown(other)).toBe(meanwhile);
  } finally {
    other.close();
  }
});

it('judges the text it makes: a secret a write brought in is redacted in every listing, before and after', async () => {
  const id = burst('s');
  store.jobs.setFeedback(id, `the agent said ${KEY}`);
  const other = openStateStore({ dir: join(tmp.path, 'incrementum') });
  try {
    expect(shown(other)).not.toContain(KEY);
    await waitFor(() => row(id).list_json, 'the job text to be made', 10_000);
    expect(row(id).list_shown).toBeNull();
    expect(shown(other)).not.toContain(KEY);
    expect(shown(other)).toContain('[REDACTED]');
  } finally {
    other.close();
  }
});

it("makes a commit's text with its job's: a later write to the commit drops it and it is judged again", async () => {
  const id = burst('c');
  const commit = () =>
    raw.prepare('SELECT list_json, list_shown FROM commits WHERE job_id = ?').get(id) as {
      list_json: string | null;
      list_shown: number | null;
    };
  expect(commit().list_json).toBeNull();
  await waitFor(() => row(id).list_json, 'the job text to be made', 10_000);
  expect(commit()).toEqual({
    list_json: JSON.stringify(store.jobs.get(id)!.changes[0]!.commits[0]),
    list_shown: SHOWN_RULES,
  });
  const result = { command: `npm test -- --key ${KEY}`, exit_code: 1, duration_ms: 1 };
  store.jobs.updateCurrentCommit(id, { tests_passed: false, test_results: [result] });
  expect(commit().list_json).toBeNull();
  await waitFor(() => row(id).list_json, 'the job text to be made again', 10_000);
  expect(commit().list_shown).toBeNull();
  expect(row(id).list_shown).toBeNull();
  expect(shown(store)).not.toContain(KEY);
  expect(shown(store)).toContain('[REDACTED]');
});

it('makes the texts still to be made when it closes, and on a listing from the writing connection', () => {
  const a = burst('a');
  const listed = shown(store);
  expect(row(a).list_json).not.toBeNull();
  expect(listed).toBe(`[${row(a).list_json}]`);
  const b = burst('b');
  expect(row(b).list_json).toBeNull();
  store.close();
  expect(row(b).list_json).toBe(JSON.stringify(openAndLoad(b)));
});

function openAndLoad(id: string) {
  store = openStateStore({ dir: join(tmp.path, 'incrementum') });
  return store.jobs.get(id);
}
