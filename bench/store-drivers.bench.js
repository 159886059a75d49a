// The store's two drivers on the same data: `ii job list --json`'s read
// (JobStore.listJson) and a whole load (JobStore.list) of 1,000 jobs and
// 10,000 commits, through the asynchronous API, on SQLite (the sync
// adapter) and on PostgreSQL (a private server this bench starts on a Unix
// socket, test/helpers/pg-server.ts); PostgreSQL as a ratio to SQLite in the
// same run. The data is made once through SQLite's store and copied row for
// row into PostgreSQL (state/pg/copy.ts): the two schemas are the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createDatabase, seedJobs } from './seed-store.js';
import { median, round, sample } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { openStateStore } = await import(join(root, 'dist', 'src', 'state', 'index.js'));
const { asyncStore } = await import(join(root, 'dist', 'src', 'state', 'sync-adapter.js'));
const { openPgStore } = await import(join(root, 'dist', 'src', 'state', 'pg', 'index.js'));
const { copySqliteToPg } = await import(join(root, 'dist', 'src', 'state', 'pg', 'copy.js'));
// Node 24 runs the TypeScript helper as it is (type stripping).
const { startPgServer } = await import(join(root, 'test', 'helpers', 'pg-server.ts'));

const REPO = 'bench-repo';

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-drivers-'));
  const server = await startPgServer();
  let pgStore = null;
  let liteStore = null;
  try {
    const dir = join(tmp, 'incrementum');
    seedJobs(dir, REPO, { finish: (j) => (j % 3 === 0 ? 'completed' : null) });
    const url = await createDatabase(server, 'ii_bench');
    await copySqliteToPg(join(dir, 'state.db'), url);
    pgStore = await openPgStore(url, { dir });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('ANALYZE');
    await client.end();
    liteStore = asyncStore(openStateStore({ dir }));

    const a = await liteStore.jobs.listJson(REPO, {});
    const b = await pgStore.jobs.listJson(REPO, {});
    if (JSON.parse(a).length !== 1000 || a !== b) throw new Error('the two drivers listed different jobs');

    const n = 9;
    const times = { liteJson: [], pgJson: [], liteList: [], pgList: [] };
    // Interleaved, so both see the same machine load.
    for (let i = 0; i < n; i++) {
      times.liteJson.push(...(await sample(1, () => liteStore.jobs.listJson(REPO, {}))));
      times.pgJson.push(...(await sample(1, () => pgStore.jobs.listJson(REPO, {}))));
      times.liteList.push(...(await sample(1, () => liteStore.jobs.list(REPO, {}))));
      times.pgList.push(...(await sample(1, () => pgStore.jobs.list(REPO, {}))));
    }
    // One job mutation (append a commit to a job of ≤ 10), on each driver.
    const mutations = {};
    for (const [name, st] of [
      ['lite', liteStore],
      ['pg', pgStore],
    ]) {
      const ids = [];
      for (let k = 0; k < 20; k++) {
        const j = await st.jobs.create(REPO, { todo_id: 'x' });
        await st.jobs.appendChange(j.id, 'Ibench');
        ids.push(j.id);
      }
      let k = 0;
      mutations[name] = await sample(200, () => st.jobs.appendCommit(ids[k % 20], { commit_id: `m${k++}` }));
    }
    const row = (name, pgMs, liteMs) => ({
      name,
      value: round(median(pgMs)),
      unit: 'ms',
      floor: round(median(liteMs)),
      ratio: round(median(pgMs) / median(liteMs)),
      goal: 'report (floor: SQLite)',
    });
    return [
      row('PostgreSQL listJson, 1,000 jobs / 10,000 commits, median', times.pgJson, times.liteJson),
      row('PostgreSQL list (whole Jobs), 1,000 jobs / 10,000 commits, median', times.pgList, times.liteList),
      row(
        'PostgreSQL job mutation (append commit, jobs of ≤ 10 commits), median',
        mutations.pg,
        mutations.lite,
      ),
    ];
  } finally {
    await pgStore?.close();
    await liteStore?.close();
    await server.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}
