// ii state migrate's renames: a repository goes across under the name it has
// where it lands when its clone is found on this machine (by a workspace of it
// still on disk, or the current repository), is kept and listed otherwise, and
// its jobs' listing texts name it as it is now; a store with a job still
// running is refused, nothing copied.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { sharedIdentity } from '../../src/state/identity.js';
import { openStateStore } from '../../src/state/index.js';
import { migrateSqliteToPg } from '../../src/state/migrate.js';
import { repoSlug } from '../../src/state/paths.js';
import { openPgStore } from '../../src/state/pg/index.js';
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

  it('renames a repository found by its workspace, keeps one with no clone here, and its jobs list under the new name', async () => {
    const root = join(tmp.path, 'widget');
    mkdirSync(root);
    gitRepo(root);
    git(root, 'remote', 'add', 'origin', 'git@example.com:team/widget.git');
    const dir = join(tmp.path, 'state');
    const slug = repoSlug(root);
    const ws = join(dir, 'workspaces', slug, 'workspace-1');
    git(root, 'worktree', 'add', '-q', '--detach', ws);
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
    const r = await migrateSqliteToPg(join(dir, 'state.db'), url, null);
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
      expect((await pgs.workspaces.list(shared.slug)).map((w) => w.path)).toEqual([ws]);
    } finally {
      await pgs.close();
    }
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
    const err = await migrateSqliteToPg(join(dir, 'state.db'), url, null).then(
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
