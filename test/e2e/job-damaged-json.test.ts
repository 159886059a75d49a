// A JSON column of one job's rows changed by hand in state.db ('not json'):
// `ii job list`, `ii job list --json` and `ii job show` say which job cannot
// be read and what to do (exit 3, as a damaged store ends), with no stack and
// no "internal error"; the other job still shows, and the row is left as it was.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { ii } from '../helpers/cli.js';
import { testEnv } from '../helpers/env.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let db: string;
let bad: string;
let good: string;
beforeEach(() => {
  tmp = tempDir('ii-damaged-json-');
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
  db = store.dbPath;
  try {
    const slug = repoSlug(repo);
    const todo = store.todos.create(slug, { title: 'listed' });
    const ids: string[] = [];
    for (let j = 0; j < 2; j++) {
      const job = store.jobs.create(slug, { todo_id: todo.id });
      ids.push(job.id);
      store.jobs.appendChange(job.id, `I${j}`);
      store.jobs.appendCommit(job.id, { commit_id: `${j}`.padEnd(40, '0'), draft_message: 'feat: x' });
      store.jobs.finish(job.id, 'completed');
    }
    [bad, good] = ids as [string, string];
    // Its listing texts made, as a listing leaves them.
    store.jobs.listCards(slug);
  } finally {
    store.close();
  }
});
afterEach(() => tmp.cleanup());

const run = (...args: string[]) => ii(args, { cwd: repo, env: testEnv(tmp.path) });

function damage(sql: string): void {
  const raw = new DatabaseSync(db);
  try {
    expect(raw.prepare(sql).run(bad).changes).toBe(1);
  } finally {
    raw.close();
  }
}

function valueOf(sql: string): unknown {
  const raw = new DatabaseSync(db);
  try {
    return Object.values(raw.prepare(sql).get(bad) ?? {})[0];
  } finally {
    raw.close();
  }
}

function expectNamed(r: ReturnType<typeof run>, what: RegExp): void {
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr).toContain(`job ${bad}'s record in the store is not valid JSON`);
  expect(r.stderr).toMatch(what);
  expect(r.stderr).not.toMatch(/internal error|SyntaxError|\n\s+at /);
}

describe('a job whose stored JSON is not JSON', () => {
  for (const [table, col] of [
    ['jobs', 'project_review'],
    ['jobs', 'landed'],
    ['commits', 'test_results'],
  ] as const)
    it(`${table}.${col}: list and show name the job and say what to do; the other job shows`, () => {
      const key = table === 'jobs' ? 'id' : 'job_id';
      damage(`UPDATE ${table} SET ${col} = 'not json' WHERE ${key} = ?`);
      const what = new RegExp(`its ${col}: .*\\n.*SET ${col} = NULL`);
      expectNamed(run('job', 'list', '--all'), what);
      const shown = run('job', 'show', bad);
      expectNamed(shown, what);
      // Said for either driver: PostgreSQL's rows are read through the same codec.
      expect(shown.stderr).toContain('psql on a shared PostgreSQL store');
      const other = run('job', 'show', good);
      expect(other.code, other.stderr).toBe(0);
      expect(other.stdout).toContain(`job ${good}`);
      // Nothing was written over it.
      expect(valueOf(`SELECT ${col} FROM ${table} WHERE ${key} = ?`)).toBe('not json');
    });

  it('jobs.list_json: ii job list --json stops before it, names it and says what to do, never exit 0 with bad JSON', () => {
    damage("UPDATE jobs SET list_json = 'not json' WHERE id = ?");
    const r = run('job', 'list', '--all', '--json');
    expectNamed(r, /UPDATE jobs SET list_json = NULL/);
    expect(r.stdout).not.toContain('not json');
    const table = run('job', 'list', '--all');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(good);
    expect(table.stdout).toContain(bad);
    expect(valueOf('SELECT list_json FROM jobs WHERE id = ?')).toBe('not json');
  });
});
