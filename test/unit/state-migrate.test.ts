// ii state migrate's renames: a repository goes across under the name it has
// where it lands when its clone is found on this machine (by a workspace of it
// still on disk, or the current repository), is kept and listed otherwise, and
// its jobs' listing texts name it as it is now; a store with a job still
// running is refused, nothing copied.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { sharedIdentity } from '../../src/state/identity.js';
import { openStateStore } from '../../src/state/index.js';
import { migrateSqliteToPg } from '../../src/state/migrate.js';
import { repoSlug } from '../../src/state/paths.js';
import { openPgStore } from '../../src/state/pg/index.js';
import { GitVcs } from '../../src/vcs/git.js';
import { dropDatabase, freshDatabase, pgServer, pgWhyNot, socketUrl } from '../helpers/pg.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const server = pgServer();

describe.skipIf(!server)(`migrating local state${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  let tmp: ReturnType<typeof tempDir>;
  const dbs: string[] = [];
  beforeEach(() => {
    tmp = tempDir('ii-migrate-unit-');
  });
  afterEach(async () => {
    for (const d of dbs.splice(0)) await dropDatabase(server!, d);
    tmp.cleanup();
  });
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  /** This machine's workspaces in `dir`, moved by git as the command does. */
  const place = (dir: string) => ({
    stateDir: dir,
    move: (root: string, a: string, b: string) => new GitVcs().moveWorkspace(root, a, b),
  });

  /** A clone with a remote, and a worktree of it named `name` among its workspaces in the state dir. */
  const widget = (name: string) => {
    const root = join(tmp.path, 'widget');
    mkdirSync(root);
    gitRepo(root);
    git(root, 'remote', 'add', 'origin', 'git@example.com:team/widget.git');
    const dir = join(tmp.path, 'state');
    const slug = repoSlug(root);
    const ws = join(dir, 'workspaces', slug, name);
    git(root, 'worktree', 'add', '-q', '--detach', ws);
    return { root, dir, slug, ws };
  };

  it('renames a repository found by its workspace, keeps one with no clone here, and its jobs list under the new name', async () => {
    const { root, dir, slug, ws } = widget('workspace-1');
    const lite = openStateStore({ dir });
    const todo = lite.todos.create(slug, { title: 'travel' });
    lite.workspaces.acquire(
      slug,
      's1',
      () => ws,
      () => 'b1',
    );
    const job = lite.jobs.create(slug, { todo_id: todo.id, workspace_path: ws });
    lite.jobs.finish(job.id, 'completed');
    lite.todos.create('gone-12345678', { title: 'no clone here' });
    lite.close();

    const name = await freshDatabase(server!);
    dbs.push(name);
    const url = socketUrl(server!, name);
    const r = await migrateSqliteToPg(join(dir, 'state.db'), url, null, place(dir));
    const shared = sharedIdentity(root);
    expect(shared).toMatchObject({ by: 'remote', source: 'example.com/team/widget' });
    expect(r.renamed).toEqual([
      { from: slug, to: shared.slug, root, by: 'remote', source: 'example.com/team/widget' },
    ]);
    expect(r.kept).toEqual(['gone-12345678']);
    expect(r.counts).toMatchObject({ todos: 2, jobs: 1, workspaces: 1 });

    const pgs = await openPgStore(url);
    try {
      expect((await pgs.todos.list(shared.slug)).map((t) => t.title)).toEqual(['travel']);
      expect(await pgs.todos.list(slug)).toEqual([]);
      const listed = JSON.parse(await pgs.jobs.listJson(shared.slug, {})) as { id: string; repo: string }[];
      expect(listed.map((j) => [j.id, j.repo])).toEqual([[job.id, shared.slug]]);
      // The workspace followed its repository's new name, a worktree still, its records with it.
      const moved = join(dir, 'workspaces', shared.slug, 'workspace-1');
      expect(r.moved).toEqual({ [ws]: moved });
      expect((await pgs.workspaces.list(shared.slug)).map((w) => w.path)).toEqual([moved]);
      expect((await pgs.jobs.get(job.id))?.workspace_path).toBe(moved);
      expect(existsSync(join(dir, 'workspaces', slug))).toBe(false);
      expect(git(moved, 'rev-parse', '--show-toplevel').trim()).toBe(moved);
      expect(git(root, 'worktree', 'list', '--porcelain')).toContain(`worktree ${moved}\n`);
    } finally {
      await pgs.close();
    }
  });

  it('a copy that fails puts the workspaces back where they were', async () => {
    const { root, dir, slug, ws } = widget('1');
    const lite = openStateStore({ dir });
    lite.workspaces.acquire(
      slug,
      's1',
      () => ws,
      () => 'b1',
    );
    lite.todos.create(slug, { title: 'travel' });
    lite.close();
    const name = await freshDatabase(server!);
    dbs.push(name);
    const url = socketUrl(server!, name);
    // Not empty: the copy is refused after the workspaces moved.
    const other = await openPgStore(url);
    await other.todos.create('someone-else', { title: 'here first' });
    await other.close();
    const err = await migrateSqliteToPg(join(dir, 'state.db'), url, root, place(dir)).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error).message).toContain('already holds todos or jobs');
    expect(git(ws, 'rev-parse', '--show-toplevel').trim()).toBe(ws);
    expect(existsSync(join(dir, 'workspaces', sharedIdentity(root).slug))).toBe(false);
  });

  it('refuses a store with a job still active, copying nothing', async () => {
    const dir = join(tmp.path, 'state');
    const lite = openStateStore({ dir });
    const todo = lite.todos.create('r-1', { title: 'busy' });
    const job = lite.jobs.create('r-1', { todo_id: todo.id });
    lite.close();
    const name = await freshDatabase(server!);
    dbs.push(name);
    const url = socketUrl(server!, name);
    const err = await migrateSqliteToPg(join(dir, 'state.db'), url, null, place(dir)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toContain(`still active (${job.id})`);
    const pgs = await openPgStore(url);
    try {
      expect(await pgs.todos.list('r-1')).toEqual([]);
    } finally {
      await pgs.close();
    }
  });
});
