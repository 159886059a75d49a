import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Job, Todo } from '../../src/model/index.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { ii } from '../helpers/cli.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  tmp = tempDir();
  mkdirSync(join(tmp.path, 'repo'));
  repo = gitRepo(join(tmp.path, 'repo'));
  env = { XDG_STATE_HOME: join(tmp.path, 'state'), HOME: tmp.path };
});
afterEach(() => tmp.cleanup());
const run = (args: string[], cwd = repo) => ii(args, { cwd, env });

describe('ii todo', () => {
  it('create prints the id; list and show find it from any subfolder', () => {
    const c = run([
      'todo',
      'create',
      '--title',
      'Add login',
      '--desc',
      'with tests',
      '--type',
      'feature',
      '--priority',
      '1',
    ]);
    expect(c.code).toBe(0);
    const id = c.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    mkdirSync(join(repo, 'deep', 'er'), { recursive: true });
    const list = run(['todo', 'list'], join(repo, 'deep', 'er'));
    expect(list.stdout).toMatch(/ID\s+PRI\s+TYPE\s+STATUS\s+AGE\s+TITLE/);
    expect(list.stdout).toContain('Add login');
    const show = run(['todo', 'show', id.slice(0, 4)]);
    expect(show.stdout).toContain(`todo ${id}: Add login`);
    expect(show.stdout).toContain('with tests');
  });
  it('--json uses the model keys', () => {
    const c = run(['todo', 'create', '--title', 'X', '--json']);
    const t = Todo.parse(JSON.parse(c.stdout));
    expect(Object.keys(JSON.parse(c.stdout))).toEqual(
      expect.arrayContaining(['id', 'title', 'created_at', 'updated_at']),
    );
    const l = JSON.parse(run(['todo', 'list', '--json', '--status', 'OPEN']).stdout) as unknown[];
    expect(l.map((x) => Todo.parse(x).id)).toEqual([t.id]);
  });
  it('bad input: clear errors and exit 2', () => {
    const p = run(['todo', 'create', '--title', 'x', '--priority', '9']);
    expect(p.code).toBe(2);
    expect(p.stderr).toMatch(/priority is an integer from 0/);
    const s = run(['todo', 'show', 'ffffffff']);
    expect([s.code, s.stderr]).toEqual([2, expect.stringMatching(/no todo matches "ffffffff"/)]);
    const ty = run(['todo', 'create', '--title', 'x', '--type', 'epic']);
    expect(ty.stderr).toMatch(/Allowed choices are task, bug, feature, chore/);
  });
  it('outside a git repository: a clear error', () => {
    mkdirSync(join(tmp.path, 'plain'));
    const r = run(['todo', 'list'], join(tmp.path, 'plain'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not inside a git repository/);
  });
});

describe('ii job list / show', () => {
  function seed() {
    const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
    const slug = repoSlug(repo);
    const todo = store.todos.create(slug, { title: 'Add login' });
    const active = store.jobs.create(slug, { todo_id: todo.id, pid: process.pid, host: hostname() });
    store.jobs.setSession(active.id, 'sess-one', '/ws/1');
    store.jobs.appendChange(active.id, 'Iabc');
    store.jobs.appendCommit(active.id, { commit_id: 'c1' });
    store.jobs.updateCurrentCommit(active.id, {
      tests_passed: true,
      review: {
        outcome: 'REQUEST_CHANGES',
        comments: 'needs a test',
        agent_session_id: null,
        reviewed_at: new Date().toISOString(),
      },
    });
    store.jobs.appendCommit(active.id, { commit_id: 'c2' });
    store.jobs.setStage(active.id, 'testing');
    const done = store.jobs.create(slug, { todo_id: todo.id });
    store.jobs.finish(done.id, 'completed');
    // A new job, no change yet, whose runner died.
    const fresh = store.jobs.create(slug, { todo_id: todo.id, pid: 999_999_999, host: hostname() });
    store.jobs.setSession(fresh.id, 'sess-two', '/ws/2');
    // A record that says nothing of changes: finished, no agent session, no project review.
    const legacy = store.jobs.create(slug, { todo_id: todo.id });
    store.jobs.finish(legacy.id, 'failed', 'before change tracking');
    store.close();
    return { todo, active, done, fresh, legacy };
  }

  it("lists active jobs with every column; a new job is on change 0, iteration 1; a dead runner's job is cleaned up, saying so", () => {
    const { active, fresh } = seed();
    const r = run(['job', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/JOB\s+TODO\s+SESSION\s+STAGE\s+STATUS\s+CHANGES\s+ITERATION\s+AGE\s+TITLE/);
    const line = r.stdout.split('\n').find((l) => l.startsWith(active.id))!;
    expect(line).toMatch(/ sess-one\s+testing\s+active\s+1\s+2\s+\S+\s+Add login/);
    expect(r.stderr).toMatch(new RegExp(`^job ${fresh.id} failed \\(its runner was gone\\)`));
    expect(r.stdout).not.toContain(fresh.id);
    const f = run(['job', 'list', '--all'])
      .stdout.split('\n')
      .find((l) => l.startsWith(fresh.id))!;
    expect(f).toMatch(/ sess-two\s+-\s+failed\s+N\/A\s+N\/A\s/);
  });
  it('a record from before change tracking shows N/A for its changes and iteration', () => {
    const { legacy, done } = seed();
    const r = run(['job', 'list', '--all']);
    const leg = r.stdout.split('\n').find((l) => l.startsWith(legacy.id))!;
    expect(leg).toMatch(/ N\/A\s+-\s+failed\s+N\/A\s+N\/A\s/);
    // A finished job the runner reviewed records its (zero) changes.
    const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
    store.jobs.setProjectReview(done.id, {
      outcome: 'ACCEPT',
      comments: '',
      agent_session_id: null,
      reviewed_at: new Date().toISOString(),
    });
    store.close();
    const d = run(['job', 'list', '--all'])
      .stdout.split('\n')
      .find((l) => l.startsWith(done.id))!;
    expect(d).toMatch(/completed\s+0\s+-\s/);
    expect(run(['job', 'show', legacy.id]).stdout).toContain('N/A (no changes recorded)');
  });
  it('--status is case-insensitive; --all includes finished; empty list hints at --all', () => {
    const { done } = seed();
    expect(run(['job', 'list', '--status', 'COMPLETED']).stdout).toContain(done.id);
    expect(run(['job', 'list', '--all']).stdout.split('\n').length).toBeGreaterThan(3);
    expect(run(['job', 'list', '--status', 'bogus']).stderr).toMatch(/unknown status "bogus"/);
  });
  it('hints at --all when only finished jobs exist', () => {
    const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
    const j = store.jobs.create(repoSlug(repo), { todo_id: 't' });
    store.jobs.finish(j.id, 'failed', 'x');
    store.close();
    expect(run(['job', 'list']).stdout).toMatch(/No active jobs \(1 finished job: ii job list --all\)/);
  });
  it('show prints the change history with reviews, and --json the model', () => {
    const { active } = seed();
    const r = run(['job', 'show', active.id.slice(0, 5)]);
    expect(r.stdout).toContain(`job ${active.id}`);
    expect(r.stdout).toMatch(/1\. Iabc\s+Testing\s+\(2 iterations\)\s+← in progress/);
    expect(r.stdout).toMatch(/iteration 1\s+c1\s+Rejected\s+tests: passed\s+review: REQUEST_CHANGES/);
    expect(r.stdout).toContain('needs a test');
    expect(r.stdout).toMatch(/iteration 2\s+c2\s+Testing/);
    const j = Job.parse(JSON.parse(run(['job', 'show', active.id, '--json']).stdout));
    expect(j.changes[0]!.commits).toHaveLength(2);
  });
  it("list --json is the store's jobs, the same records job show --json prints", () => {
    const { active, done } = seed();
    // Read after the listing: it fails the seeded job whose runner is gone first.
    const r = run(['job', 'list', '--json', '--all']);
    expect(r.code).toBe(0);
    const store = openStateStore({ dir: join(tmp.path, 'state', 'incrementum') });
    const all = store.jobs.list(repoSlug(repo));
    store.close();
    expect(r.stdout).toBe(JSON.stringify(all) + '\n');
    const listed = (JSON.parse(r.stdout) as unknown[]).map((j) => Job.parse(j));
    for (const id of [active.id, done.id]) {
      const shown = Job.parse(JSON.parse(run(['job', 'show', id, '--json']).stdout));
      expect(listed.find((j) => j.id === id)).toStrictEqual(shown);
    }
    const active1 = JSON.parse(run(['job', 'list', '--json']).stdout) as { id: string }[];
    expect(active1.map((j) => j.id).sort()).toEqual(
      all
        .filter((j) => j.status === 'active')
        .map((j) => j.id)
        .sort(),
    );
    expect(JSON.parse(run(['job', 'list', '--json', '--status', 'Completed']).stdout)).toEqual([
      expect.objectContaining({ id: done.id }),
    ]);
  });
  it('--help tells the truth for each command', () => {
    for (const args of [
      ['--help'],
      ['todo', '--help'],
      ['todo', 'create', '--help'],
      ['job', 'list', '--help'],
      ['job', 'show', '--help'],
    ]) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: ii/);
    }
  });
});
