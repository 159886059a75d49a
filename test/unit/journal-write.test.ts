import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import {
  appendNote,
  journalJsonFile,
  journalMdFile,
  stopFile,
  writeJournal,
  writeStopFile,
} from '../../src/journal/index.js';
import { Journal } from '../../src/journal/schema.js';
import type { StateStore } from '../../src/state/api.js';
import { appendEvent } from '../../src/state/events.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { makeFinishedJob, type MadeJob } from '../helpers/journal-job.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
let stateDir: string;
let root: string;
let made: MadeJob;

beforeEach(() => {
  tmp = tempDir();
  stateDir = join(tmp.path, 'state', 'incrementum');
  store = openStateStore({ dir: stateDir });
  root = join(tmp.path, 'repo');
  mkdirSync(root);
  gitRepo(root);
  made = makeFinishedJob(store, stateDir, root);
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

const write = (opts: Parameters<typeof writeJournal>[3] = {}) =>
  writeJournal(asyncStore(store), stateDir, made.job.id, { repoRoot: root, ...opts });

describe('writeJournal on a job made through the store and a real git repo', () => {
  it('writes journal.json and journal.md that agree with the job record and git', async () => {
    const w = await write();
    expect(w.reused).toBe(false);
    const onDisk = Journal.parse(JSON.parse(readFileSync(journalJsonFile(stateDir, made.job.id), 'utf8')));
    expect(onDisk).toEqual(w.journal);
    expect(readFileSync(journalMdFile(stateDir, made.job.id), 'utf8')).toBe(w.markdown);
    const j = w.journal;
    expect(j).toMatchObject({
      run_id: made.job.id,
      repo: repoSlug(root),
      repo_root: root,
      base_sha: made.base,
      head_sha: made.commits[1],
      task: { todo_id: made.job.todo_id, title: 'Greet the world' },
    });
    expect(j.status).toMatchObject({
      terminal_state: 'complete',
      job_status: 'completed',
      timestamps: { ended_at: made.job.completed_at },
    });
    expect(j.milestones).toEqual({ attempted: 2, total: 2, verified: 2, accepted: 2, iterations: 3 });
    expect(j.checkpoints.list.map((c) => c.sha)).toEqual(made.commits);
    expect(j.checkpoints.list.map((c) => c.title)).toEqual(['feat: change 1', 'feat: change 2']);
    expect(j.checkpoints.list[0]?.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    expect(j.verification.summary).toEqual({
      attempts_total: 3,
      attempts_passed: 2,
      attempts_failed: 1,
      total_duration_seconds: 0.04,
    });
    expect(j.verification.last_failure).toEqual({
      command: 'sh test.sh',
      exit_code: 1,
      error_excerpt: 'hello.txt is missing\nAPI_TOKEN=[REDACTED]',
      log_path: join(stateDir, 'jobs', made.job.id, 'events.jsonl'),
    });
    expect(j.changes).toMatchObject({ files_changed: 2, insertions: 3, deletions: 0 });
    expect(j.changes?.diff_stat).toContain('2 files changed, 3 insertions(+)');
    expect(j.usage.total).toEqual({ input_tokens: 200, output_tokens: 20, cost: 0.02 });
    expect(j.warnings).toEqual([]);
    expect(statSync(journalJsonFile(stateDir, made.job.id)).mode & 0o777).toBe(0o600);
  });

  it('reuses an up-to-date journal, and rebuilds after a note, an event, a stop file, a record change or --force', async () => {
    const first = await write();
    const again = await write();
    expect(again.reused).toBe(true);
    expect(again.journal).toEqual(first.journal);

    appendNote(stateDir, made.job.id, 'checked by hand');
    const afterNote = await write();
    expect(afterNote.reused).toBe(false);
    expect(afterNote.journal.notes).toMatchObject({ count: 1, recent: [{ text: 'checked by hand' }] });
    expect(afterNote.markdown).toContain('checked by hand');
    expect((await write()).reused).toBe(true);

    appendEvent(stateDir, made.job.id, 'warning', { message: 'late' });
    expect((await write()).reused).toBe(false);

    writeStopFile(stateDir, made.job.id, {
      reason: 'waiting on a decision',
      next_action: { title: 'Ask the owner', command: null, why: 'two options' },
    });
    const afterStop = await write();
    expect(afterStop.reused).toBe(false);
    // The spec's next_action always has a command: without one, where to look.
    expect(afterStop.journal.next_action).toEqual({
      title: 'Ask the owner',
      command: `ii job show ${made.job.id}`,
      why: 'two options',
    });
    expect(afterStop.journal.extraction.next_action).toBe('stop_json');

    store.jobs.setFeedback(made.job.id, 'changed');
    expect((await write()).reused).toBe(false);
    expect((await write()).reused).toBe(true);
    expect((await write({ force: true })).reused).toBe(false);
  });

  it('rebuilds a journal.json that cannot be read instead of failing', async () => {
    await write();
    writeFileSync(journalJsonFile(stateDir, made.job.id), '{ torn');
    const w = await write();
    expect(w.reused).toBe(false);
    expect(
      Journal.safeParse(JSON.parse(readFileSync(journalJsonFile(stateDir, made.job.id), 'utf8'))).success,
    ).toBe(true);
  });

  it('git failing (the repository is gone) costs the git sections, not the journal', async () => {
    const w = await write({ repoRoot: join(tmp.path, 'not-a-repo') });
    expect(w.journal.checkpoints).toEqual({ created: 0, list: [], last_sha: null });
    expect(w.journal.changes.files_changed).toBeNull();
    expect(w.journal.milestones.total).toBe(2);
    expect(w.journal.warnings.join('\n')).toMatch(/no checkpoints: git log failed/);
    expect(w.markdown).toContain(
      '## Warnings\n\n⚠️ The following issues were encountered while generating this journal:\n\n- no checkpoints: git log failed',
    );
  });

  it('a missing events file: warnings, never a throw', async () => {
    const { rmSync } = await import('node:fs');
    rmSync(join(stateDir, 'jobs', made.job.id, 'events.jsonl'));
    const w = await write();
    expect(w.journal.checkpoints).toEqual({ created: 0, list: [], last_sha: null });
    expect(w.journal.verification.last_failure?.error_excerpt).toBe('');
    expect(w.journal.warnings.join('\n')).toContain('the event log is missing');
  });

  it('an invalid stop file is ignored with a warning', async () => {
    mkdirSync(join(stateDir, 'jobs', made.job.id), { recursive: true });
    writeFileSync(stopFile(stateDir, made.job.id), '{"next_action": {"title": ""}}');
    const w = await write();
    expect(w.journal.sources.next_action).toBe('derived from the status');
    expect(w.journal.warnings.join('\n')).toMatch(/the stop file was ignored: next_action.title/);
  });

  it('finds the repository from the workspace when no root is given', async () => {
    const w = await writeJournal(asyncStore(store), stateDir, made.job.id);
    expect(w.journal.repo_root).toBe(root);
    expect(w.journal.checkpoints.list).toHaveLength(2);
  });

  it('a running job: running while its runner lives, unknown once it is gone', async () => {
    const todo = store.todos.create(repoSlug(root), { title: 'Running' });
    const base = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const live = store.jobs.create(repoSlug(root), {
      todo_id: todo.id,
      base_rev: base,
      pid: process.pid,
      host: hostname(),
    });
    const j = (await writeJournal(asyncStore(store), stateDir, live.id, { repoRoot: root })).journal;
    expect(j.status).toMatchObject({
      terminal_state: 'running',
      timestamps: { ended_at: null },
      duration_seconds: null,
    });
    expect(j.checkpoints).toEqual({ created: 0, list: [], last_sha: null });

    // A pid that has certainly exited: a child we waited for.
    const dead = execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const gone = store.jobs.create(repoSlug(root), {
      todo_id: todo.id,
      base_rev: base,
      pid: Number(dead),
      host: hostname(),
    });
    const g = (await writeJournal(asyncStore(store), stateDir, gone.id, { repoRoot: root })).journal;
    expect(g.status.terminal_state).toBe('unknown');
    expect(g.next_action?.command).toBe(`ii job retry ${gone.id}`);
  });

  it('a job that is not in the store is a UserError', async () => {
    await expect(writeJournal(asyncStore(store), stateDir, 'nosuchjob')).rejects.toBeInstanceOf(UserError);
    expect(existsSync(join(stateDir, 'jobs', 'nosuchjob'))).toBe(false);
  });

  it('an empty note is refused', () => {
    expect(() => appendNote(stateDir, made.job.id, '   ')).toThrow(UserError);
  });
});
