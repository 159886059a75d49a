// A store copied between the drivers, there and back (what `ii state
// migrate` will do): every table's rows counted on both sides, the same
// listing text, todos and requests on each, ids going on after the copied
// ones; a store that is not empty is refused, untouched. And the opener that
// picks the driver by II_DATABASE_URL.
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import type { NewPermissionAsk } from '../../src/model/permission-ask.js';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { openAsyncStateStore } from '../../src/state/open-async.js';
import { copyPgToSqlite, copySqliteToPg } from '../../src/state/pg/copy.js';
import { openPgStore } from '../../src/state/pg/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { dropDatabase, freshDatabase, pgServer, pgWhyNot, socketUrl } from '../helpers/pg.js';
import { tempDir, waitFor } from '../helpers/tmp.js';

const server = pgServer();

const ASK: NewPermissionAsk = {
  tool_kind: 'execute',
  title: 'Run npm test',
  command: 'npm test',
  paths: ['a.ts'],
  diff_preview: null,
  options: [{ id: 'a1', name: 'Allow', kind: 'allow_once' }],
};

/** A store with a row in every table. */
function fill(s: StateStore): void {
  const dep = s.todos.create('r', { title: 'dep' });
  const t = s.todos.create('r', { title: 'T', deps: [dep.id], description: 'd' });
  s.todos.setStatus('r', dep.id, 'done');
  const j = s.jobs.claim('r', { todo_id: t.id, pid: 3, host: 'h' }, () => null);
  s.jobs.addAgentSession(j.id, { purpose: 'implement', id: 'a1', transcript: '/t' });
  s.jobs.appendChange(j.id, 'ch1');
  s.jobs.appendCommit(j.id, {
    commit_id: 'c1',
    draft_message: 'm',
    usage: { input_tokens: 3, output_tokens: 4, cost: 0.0117 },
  });
  s.jobs.updateCurrentCommit(j.id, {
    review: {
      outcome: 'ACCEPT',
      comments: 'ok',
      agent_session_id: null,
      reviewed_at: '2026-11-22T00:00:00.000Z',
    },
  });
  s.jobs.addUsage(j.id, { input_tokens: 1, output_tokens: 1, cost: 0.0117 });
  const ask = s.asks.open(j.id, ASK);
  s.asks.close(ask.id, 'reject', 'not that');
  s.jobs.finish(j.id, 'completed');
  s.control.request(j.id, 'abandon', 'x');
  s.sessions.create('r', { todo_id: t.id, workspace_path: '/ws/1' });
  s.workspaces.acquire(
    'r',
    'sess',
    (n) => `/ws/${n}`,
    (n) => `b${n}`,
  );
  s.processGroups.record({
    job_id: j.id,
    workspace_path: '/ws/1',
    pgid: 9,
    start_ticks: 1,
    host: 'h',
    label: 'x',
  });
  s.runners.register({ repo: 'r', pid: 1, host: 'h', slots: 2, watch: false });
}

describe.skipIf(!server)(
  `copying a store between the drivers${server ? '' : ` (skipped: ${pgWhyNot()})`}`,
  () => {
    let tmp: ReturnType<typeof tempDir>;
    const dbs: string[] = [];
    beforeEach(() => {
      tmp = tempDir();
    });
    afterEach(async () => {
      for (const d of dbs.splice(0)) await dropDatabase(server!, d);
      tmp.cleanup();
    });

    /** A SQLite store filled (fill()) and closed, its version, and a fresh database's URL. */
    async function filledAndEmpty(): Promise<{ liteDir: string; copiedVersion: number; url: string }> {
      const liteDir = join(tmp.path, 'a');
      const lite = openStateStore({ dir: liteDir });
      fill(lite);
      const copiedVersion = lite.jobs.version();
      lite.close();
      const name = await freshDatabase(server!);
      dbs.push(name);
      return { liteDir, copiedVersion, url: socketUrl(server!, name) };
    }

    it('SQLite → PostgreSQL → SQLite: the same rows, listing, todos and requests; ids go on after the copied ones', async () => {
      const liteDir = join(tmp.path, 'a');
      const lite = openStateStore({ dir: liteDir });
      fill(lite);
      let listing = lite.jobs.listJson('r');
      const todos = lite.todos.list('r');
      const version = lite.jobs.version();
      lite.close();

      const name = await freshDatabase(server!);
      dbs.push(name);
      const url = socketUrl(server!, name);
      const there = await copySqliteToPg(join(liteDir, 'state.db'), url);
      for (const t of [
        'todos',
        'jobs',
        'changes',
        'commits',
        'reviews',
        'agent_sessions',
        'control_requests',
        'permission_asks',
        'sessions',
        'workspaces',
        'process_groups',
        'runners',
      ])
        expect([t, there[t]]).toEqual([t, t === 'todos' ? 2 : 1]);
      const p = await openPgStore(url);
      try {
        expect(await p.jobs.listJson('r')).toBe(listing);
        expect(await p.todos.list('r')).toEqual(todos);
        // One past the copied version: its rows are stamped with it (a reader on the store sees them).
        expect(await p.jobs.version()).toBe(version + 1);
        const [job] = await p.jobs.list('r');
        const copied = await p.control.pending(job!.id);
        const next = await p.control.request(job!.id, 'abandon');
        expect(next.id).toBeGreaterThan(copied[0]!.id);
        await p.control.markHandled(next.id);
        // A request opened on PostgreSQL goes on after the copied one; the job's listing then changes.
        const asks = await p.asks.list(job!.id);
        expect(asks).toEqual([
          expect.objectContaining({ outcome: 'reject', note: 'not that', paths: ['a.ts'] }),
        ]);
        const again = await p.asks.open(job!.id, ASK);
        expect(again.id).toBeGreaterThan(asks[0]!.id);
        expect((await p.jobs.get(job!.id))?.asking).toEqual(again);
        listing = await p.jobs.listJson('r');
      } finally {
        await p.close();
      }

      const backDir = join(tmp.path, 'b');
      const back = await copyPgToSqlite(url, join(backDir, 'state.db'));
      // The request made on PostgreSQL came along; its meta holds the schema's version too.
      expect(back).toEqual({ ...there, control_requests: 2, permission_asks: 2, meta: 2 });
      const b = asyncStore(openStateStore({ dir: backDir }));
      try {
        expect(await b.jobs.listJson('r')).toBe(listing);
        expect(await b.todos.list('r')).toEqual(todos);
        const [job] = await b.jobs.list('r');
        expect((await b.control.pending(job!.id)).length).toBe(1);
        expect((await b.control.request(job!.id, 'abandon')).id).toBe(3);
        expect(job!.asking?.id).toBe(2);
        expect((await b.asks.open(job!.id, ASK)).id).toBe(3);
      } finally {
        await b.close();
      }
    });

    it("a copy that renames the repository: its jobs' listing texts are made again by the first listing and kept for the next", async () => {
      const liteDir = join(tmp.path, 'a');
      const lite = openStateStore({ dir: liteDir });
      fill(lite);
      lite.close();
      const name = await freshDatabase(server!);
      dbs.push(name);
      const url = socketUrl(server!, name);
      await copySqliteToPg(join(liteDir, 'state.db'), url, { rekey: { r: 'shared' } });
      const kept = async () => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          return (await c.query<{ n: string }>('SELECT count(list_json) AS n FROM jobs')).rows[0]!.n;
        } finally {
          await c.end();
        }
      };
      expect(await kept()).toBe('0');
      const p = await openPgStore(url);
      try {
        const made = JSON.stringify(await p.jobs.list('shared'));
        expect(JSON.parse(made)[0].repo).toBe('shared');
        expect(Buffer.from(await p.jobs.listShown('shared', {})).toString()).toBe(made);
        // Kept: the next listing joins the stored texts (the same), loading nothing.
        expect(await kept()).toBe('1');
        expect(await p.jobs.listJson('shared')).toBe(made);
        expect(Buffer.from(await p.jobs.listShown('shared', {})).toString()).toBe(made);
      } finally {
        await p.close();
      }
    });

    it('refuses a destination that holds todos or jobs, changing nothing', async () => {
      const liteDir = join(tmp.path, 'a');
      const lite = openStateStore({ dir: liteDir });
      fill(lite);
      lite.close();
      const name = await freshDatabase(server!);
      dbs.push(name);
      const url = socketUrl(server!, name);
      const p = await openPgStore(url);
      await p.todos.create('r', { title: 'already here' });
      await expect(copySqliteToPg(join(liteDir, 'state.db'), url)).rejects.toThrow(
        /already holds todos or jobs: a copy goes only into an empty store/,
      );
      expect((await p.todos.list('r')).map((t) => t.title)).toEqual(['already here']);
      await p.close();
      await expect(copyPgToSqlite(url, join(liteDir, 'state.db'))).rejects.toThrow(
        /already holds todos or jobs/,
      );
    });

    it("goes in beside an ii run's record on the destination (another machine waiting on the empty backlog), and refuses other rows", async () => {
      const liteDir = join(tmp.path, 'a');
      const lite = openStateStore({ dir: liteDir });
      fill(lite);
      lite.close();
      const name = await freshDatabase(server!);
      dbs.push(name);
      const url = socketUrl(server!, name);
      const p = await openPgStore(url);
      try {
        // Its id is the copied runner's too: the copied one takes a new id.
        const waiting = await p.runners.register({ repo: 'r', pid: 7, host: 'm2', slots: 1, watch: true });
        await copySqliteToPg(join(liteDir, 'state.db'), url);
        expect((await p.runners.list('r')).map((r) => [r.host, r.pid]).sort()).toEqual([
          ['h', 1],
          ['m2', 7],
        ]);
        expect((await p.runners.get(waiting.id))?.host).toBe('m2');
        expect((await p.todos.list('r')).length).toBe(2);
      } finally {
        await p.close();
      }
      // Any other row (a session here) would collide: refused, saying which, nothing changed.
      const name2 = await freshDatabase(server!);
      dbs.push(name2);
      const url2 = socketUrl(server!, name2);
      const q = await openPgStore(url2);
      try {
        await q.sessions.create('x', { todo_id: 't', workspace_path: '/ws/9' });
        const err = await copySqliteToPg(join(liteDir, 'state.db'), url2).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(UserError);
        expect((err as Error).message).toMatch(/already holds rows of sessions/);
        expect(await q.todos.list('r')).toEqual([]);
      } finally {
        await q.close();
      }
    });

    it('a copy into a store whose version is past the copied one: boards and runners already on it see every copied row, and are told', async () => {
      const { liteDir, copiedVersion, url } = await filledAndEmpty();
      // The shared store before the copy: runners waiting on an empty backlog
      // (each registration a write), a board reading it, its last version seen.
      const board = await openPgStore(url);
      try {
        for (let i = 0; i < copiedVersion + 5; i++)
          await board.runners.remove(
            (await board.runners.register({ repo: 'r', pid: 100 + i, host: 'm2', slots: 1, watch: true })).id,
          );
        const last = await board.jobs.version();
        expect(last).toBeGreaterThan(copiedVersion);
        const notices: number[] = [];
        const stop = await board.watch!((v) => notices.push(v));
        await copySqliteToPg(join(liteDir, 'state.db'), url);
        // What a board reads on each notice: what changed after the last version it saw.
        expect((await board.todos.listChangedAfter('r', last)).map((t) => t.title).sort()).toEqual([
          'T',
          'dep',
        ]);
        expect((await board.jobs.listChangedAfter(last, 'r')).length).toBe(1);
        const now = await board.jobs.version();
        expect(now).toBeGreaterThan(last);
        await waitFor(() => notices.includes(now), 'the copy announced to the watching board');
        await stop();
      } finally {
        await board.close();
      }
    });

    it('a copy back into a SQLite store whose version is past the copied one: a board or ii run already on it sees every copied row', async () => {
      const { liteDir, copiedVersion, url } = await filledAndEmpty();
      await copySqliteToPg(join(liteDir, 'state.db'), url);
      // The empty store before the copy: runners waiting on it (each
      // registration a write), and a reader, its last version seen.
      const backDir = join(tmp.path, 'b');
      const reader = openStateStore({ dir: backDir });
      try {
        for (let i = 0; i < copiedVersion + 5; i++)
          reader.runners.remove(
            reader.runners.register({ repo: 'r', pid: 100 + i, host: 'm2', slots: 1, watch: true }).id,
          );
        const last = reader.jobs.version();
        expect(last).toBeGreaterThan(copiedVersion + 1);
        await copyPgToSqlite(url, join(backDir, 'state.db'));
        expect(reader.jobs.version()).toBeGreaterThan(last);
        expect(
          reader.todos
            .listChangedAfter('r', last)
            .map((t) => t.title)
            .sort(),
        ).toEqual(['T', 'dep']);
        expect(reader.jobs.listChangedAfter(last, 'r')).toHaveLength(1);
        expect(reader.jobs.briefsChangedAfter('r', last)).toHaveLength(1);
      } finally {
        reader.close();
      }
    });

    it('openAsyncStateStore: PostgreSQL when II_DATABASE_URL is set, SQLite otherwise', async () => {
      const name = await freshDatabase(server!);
      dbs.push(name);
      const pgStore = await openAsyncStateStore({
        dir: tmp.path,
        env: { II_DATABASE_URL: socketUrl(server!, name) },
      });
      expect(pgStore.driver).toBe('postgres');
      await pgStore.close();
      const liteStore = await openAsyncStateStore({ dir: tmp.path, env: { II_DATABASE_URL: ' ' } });
      expect(liteStore.driver).toBe('sqlite');
      expect(liteStore.location).toBe(join(tmp.path, 'state.db'));
      await liteStore.close();
    });
  },
);
