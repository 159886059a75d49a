// ii dashboard on a shared PostgreSQL store, in a real terminal (tmux): a job
// claimed by another machine's runner (another connection, another state dir)
// appears on the board, its stage moves, and its live pane shows the events
// that runner shipped to the store (none of its files are on this machine);
// q quits cleanly.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { II, ii } from '../helpers/cli.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const server = pgServer();
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.skipIf(!server || !hasTmux)(
  `ii dashboard on PostgreSQL${server ? '' : ` (skipped: ${pgWhyNot()})`}`,
  () => {
    const db = usePgDatabase({ prefix: 'ii_board' });
    it("shows another machine's job as it moves, and its live pane from the store", async () => {
      const url = db.url;
      const tmp = tempDir('ii-pgboard-');
      cleanups.push(tmp.cleanup);
      const repo = join(tmp.path, 'repo');
      execFileSync('mkdir', [repo]);
      gitRepo(repo);
      const env = { XDG_STATE_HOME: join(tmp.path, 'state'), II_DATABASE_URL: url };
      const created = ii(['todo', 'create', '--title', 'from machine B'], { cwd: repo, env });
      expect(created.code, created.stderr).toBe(0);
      const todoId = created.stdout.trim();

      // Machine B: its own connection and state dir.
      const other = tempDir('ii-pgboard-b-');
      cleanups.push(other.cleanup);
      const b: AsyncStateStore = await db.open({ dir: other.path });
      const [{ repo: repoKey } = { repo: '' }] = await db.query<{ repo: string }>('SELECT repo FROM todos');

      const t = new Tmux(tmp.path);
      cleanups.push(() => t.kill());
      t.start([process.execPath, II, 'dashboard'], {
        cwd: repo,
        env: { ...env, NO_COLOR: '1', CI: 'true', PATH: process.env.PATH ?? '' },
      });
      await t.screenWith('incrementum · Jobs');

      const job = await b.jobs.claim(
        repoKey,
        { todo_id: todoId, pid: process.pid, host: 'machine-b' },
        () => null,
      );
      await t.screenWith('from machine B', 'Impl (1)');
      const ev = (message: string) =>
        JSON.stringify({ ts: new Date().toISOString(), type: 'warning', message });
      await b.logs.append(job.id, 'events', [ev('disk nearly full on B')]);
      await t.screenWith('disk nearly full on B');
      await b.jobs.setStage(job.id, 'testing');
      await t.screenWith('Test (1)');

      t.send('q');
      expect(await t.exitStatus()).toBe(0);
    });
  },
);
