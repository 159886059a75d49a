// ii state migrate renames a repository (SQLite names it by its clone's path,
// PostgreSQL by its remote), and its workspaces live under its name in the
// state dir: they move with it, so on the new store a migrated job's diff,
// retry and landing work, the prune finds every workspace, and nothing is
// left on disk under the old name. A completed job and a failed one (its
// runner stopped with Ctrl-C) go across.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sharedIdentity } from '../../src/state/identity.js';
import { repoSlug } from '../../src/state/paths.js';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { waitFor } from '../helpers/tmp.js';

const server = pgServer();

describe.skipIf(!server)(
  `workspaces after ii state migrate${server ? '' : ` (skipped: ${pgWhyNot()})`}`,
  () => {
    const db = usePgDatabase({ prefix: 'ii_migws' });
    let f: JobFixture;
    beforeEach(() => {
      f = new JobFixture('ii-migws-');
    });
    afterEach(() => f.cleanup());

    it("a migrated job's workspace is found under the new name: diff, retry, land and prune work, nothing is left under the old", async () => {
      f.setup();
      const bare = join(f.tmp.path, 'shared.git');
      f.git('clone', '-q', '--bare', f.repo, bare);
      f.git('remote', 'add', 'origin', bare);
      f.git('fetch', '-q', 'origin');
      const oldName = repoSlug(f.repo);
      const newName = sharedIdentity(f.repo).slug;
      expect(newName).not.toBe(oldName);
      const wsDir = (name: string) => join(f.tmp.path, 'state', 'incrementum', 'workspaces', name);

      // On SQLite: a completed job and a failed one.
      const done = f.run(
        ['job', 'do', '--title', 'greet'],
        f.scenario('done', {
          implement: [{ actions: [write('hello.txt', 'hello\n')] }],
          review: [verdict('ACCEPT', '')],
          'commit-message': [{ actions: [{ type: 'commit_message', text: 'Greet' }] }],
        }),
      );
      expect(done.code, done.stderr).toBe(0);
      const doneId = jobIdFrom(done.stderr);
      const slow = f.spawn(
        ['job', 'do', '--title', 'slow'],
        f.scenario('slow', { implement: [{ actions: [{ type: 'delay', ms: 60_000 }] }] }),
      );
      await waitFor(() => slow.stderr().includes('implementing'), 'the slow job implementing', 60_000);
      const failedId = jobIdFrom(slow.stderr());
      slow.child.kill('SIGINT');
      await slow.exit;
      expect(f.show(failedId).status).toBe('failed');
      expect(readdirSync(wsDir(oldName)).length).toBeGreaterThan(0);

      const moved = f.run(['state', 'migrate', '--to', db.url]);
      expect(moved.code, moved.stderr).toBe(0);
      expect(moved.stdout).toContain("Workspaces moved to their repository's new name");
      expect(existsSync(wsDir(oldName))).toBe(false);

      // On PostgreSQL from now on.
      f.env.II_DATABASE_URL = db.url;
      const ws = f.workspaces();
      expect(ws.length).toBeGreaterThan(0);
      for (const w of ws) expect(w.path.startsWith(wsDir(newName) + '/')).toBe(true);
      expect(f.show(doneId).workspace_path?.startsWith(wsDir(newName) + '/')).toBe(true);

      const diff = f.run(['job', 'diff', doneId]);
      expect(diff.code, diff.stderr).toBe(0);
      expect(diff.stdout).toContain('hello.txt');

      const retried = f.run(
        ['job', 'retry', failedId],
        f.scenario('retry', {
          implement: [{ actions: [write('slow.txt', 'done\n')] }],
          review: [verdict('ACCEPT', '')],
          'commit-message': [{ actions: [{ type: 'commit_message', text: 'Slow' }] }],
        }),
      );
      expect(retried.code, retried.stderr).toBe(0);
      const again = f.show(jobIdFrom(retried.stderr));
      expect(again).toMatchObject({ status: 'completed', retried_from: failedId });

      const landed = f.run(['job', 'land', doneId, '--no-test']);
      expect(landed.code, landed.stderr).toBe(0);
      // The landed job's workspace went with its landing, from where it now is.
      expect(existsSync(f.show(doneId).workspace_path!)).toBe(false);

      const pruned = f.run(['workspace', 'prune']);
      expect(pruned.code, pruned.stderr).toBe(0);
      expect(f.workspaces()).toEqual([]);
      expect(existsSync(wsDir(oldName))).toBe(false);
      expect(existsSync(wsDir(newName)) ? readdirSync(wsDir(newName)) : []).toEqual([]);
      // And git has no worktree left registered but the clone itself.
      const worktrees = f.git('worktree', 'list', '--porcelain').match(/^worktree /gm) ?? [];
      expect(worktrees).toHaveLength(1);
    });
  },
);
