// `ii job list --json` writes its listing as it reads it (to a pipe or a
// file, in 64 KiB blocks), so a listing that fails midway has already put
// some of it on stdout. What the reader (jq, a script) gets then is the jobs
// read before the failure, whole, with no closing bracket: never valid JSON,
// never mistaken for the whole list; stderr says so, then what stopped it,
// and the exit is not 0.
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { ii } from '../helpers/cli.js';
import { testEnv } from '../helpers/env.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const JOBS = 300;
let tmp: ReturnType<typeof tempDir>;
let repo: string;
let db: string;
let oldest: string | undefined;
beforeEach(() => {
  tmp = tempDir('ii-list-cut-');
  oldest = undefined;
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  // 300 jobs of 5 commits: ~750 KB of listing, many 64 KiB blocks.
  const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
  db = store.dbPath;
  try {
    const slug = repoSlug(repo);
    const todo = store.todos.create(slug, { title: 'listed' });
    for (let j = 0; j < JOBS; j++) {
      const job = store.jobs.create(slug, { todo_id: todo.id });
      oldest ??= job.id;
      store.jobs.appendChange(job.id, `I${j}`);
      for (let c = 0; c < 5; c++)
        store.jobs.appendCommit(job.id, { commit_id: `${j}-${c}`.padEnd(40, '0'), draft_message: 'feat: x' });
      store.jobs.finish(job.id, 'completed');
    }
  } finally {
    store.close();
  }
});
afterEach(() => tmp.cleanup());

const list = () => ii(['job', 'list', '--all', '--json'], { cwd: repo, env: testEnv(tmp.path) });

/** The jobs a cut-short listing holds, read as the note says it ends: after a job or its comma. */
function jobsIn(stdout: string): { id: string }[] {
  expect(() => JSON.parse(stdout) as unknown).toThrow(SyntaxError);
  expect(stdout.trimEnd()).not.toMatch(/\]$/);
  return JSON.parse(`${stdout.trimEnd().replace(/,$/, '')}]`) as { id: string }[];
}

function expectNote(stderr: string, jobs: number): void {
  expect(stderr).toContain(
    `the job listing on stdout stops after its first ${jobs} jobs, with no closing bracket: it is not valid JSON, nor the whole list`,
  );
  expect(stderr).toContain('Run ii job list --json again once what stopped it (below) is dealt with.');
}

describe('ii job list --json failing midway', () => {
  it('the store found damaged after 64 KiB were written: the jobs read, whole, no bracket; stderr says so, then the damage (exit 3)', () => {
    // The first leaf page of jobs holds the oldest jobs: the listing (newest first) meets it last.
    const raw = new DatabaseSync(db, { readOnly: true });
    const { page_size } = raw.prepare('PRAGMA page_size').get() as { page_size: number };
    const { pageno } = raw
      .prepare("SELECT pageno FROM dbstat WHERE name = 'jobs' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1")
      .get() as { pageno: number };
    raw.close();
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(page_size, 0x5a), 0, page_size, (pageno - 1) * page_size);
    closeSync(fd);

    const r = list();
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout.length).toBeGreaterThan(64 * 1024);
    const jobs = jobsIn(r.stdout);
    expect(jobs.length).toBeGreaterThan(0);
    expect(jobs.length).toBeLessThan(JOBS);
    expectNote(r.stderr, jobs.length);
    // Then the error that stopped it, with what to do about it.
    expect(r.stderr.indexOf('is damaged')).toBeGreaterThan(r.stderr.indexOf('stops after'));
    expect(r.stderr).toContain('.recover');
  });

  it('a row that cannot be read: the same note, then which job and what to do (exit 3)', () => {
    // The oldest job's kept text is not JSON and holds what looks like a secret,
    // so the listing must parse it to redact it.
    const raw = new DatabaseSync(db);
    const changed = raw
      .prepare('UPDATE jobs SET list_json = ?, list_shown = NULL WHERE id = ?')
      .run(`{"feedback":"sk-ant-api03-${'A'.repeat(40)}`, oldest!);
    expect(changed.changes).toBe(1);
    raw.close();

    const r = list();
    expect(r.code, r.stderr).toBe(3);
    const jobs = jobsIn(r.stdout);
    expect(jobs).toHaveLength(JOBS - 1);
    expect(jobs.map((j) => j.id)).not.toContain(oldest);
    expectNote(r.stderr, JOBS - 1);
    // Then which job, and what to do: no stack.
    expect(r.stderr).toContain(`job ${oldest}'s record in the store is not valid JSON`);
    expect(r.stderr).toContain(`ii job show ${oldest} shows what can be read of it`);
    expect(r.stderr).not.toContain('internal error');
  });

  it('a whole listing is still the whole list, with nothing on stderr', () => {
    const r = list();
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(JOBS);
    expect(r.stderr).toBe('');
  });
});
