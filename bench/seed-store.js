// The data the store benchmarks read, made the same way in each: a SQLite
// store of 1,000 jobs of 10 commits each (one todo, one change a job), and
// an empty database on the bench's private PostgreSQL server to move it to.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { openStateStore } = await import(join(root, 'dist', 'src', 'state', 'index.js'));

/**
 * Writes `jobs` jobs of `commitsPerJob` commits (tests passed) into the
 * SQLite store in `dir`, all of one todo of `repo`; `finish(j)` names how job
 * j ends ('completed', 'failed'), or null to leave it running.
 */
export function seedJobs(dir, repo, { jobs = 1000, commitsPerJob = 10, finish = () => null } = {}) {
  const store = openStateStore({ dir });
  try {
    const todo = store.todos.create(repo, { title: 'benchmark todo' });
    for (let j = 0; j < jobs; j++) {
      const job = store.jobs.create(repo, { todo_id: todo.id });
      store.jobs.appendChange(job.id, `I${j.toString(16).padStart(40, '0')}`);
      for (let c = 0; c < commitsPerJob; c++)
        store.jobs.appendCommit(job.id, {
          commit_id: `${j}-${c}`.padEnd(40, '0'),
          draft_message: 'feat: something',
          tests_passed: true,
          files: [{ path: 'src/a.ts', is_new: false, is_deleted: false, additions: 3, deletions: 1 }],
        });
      const status = finish(j);
      if (status) store.jobs.finish(job.id, status);
    }
  } finally {
    store.close();
  }
}

/** A client of `server`'s own database (test/helpers/pg-server.ts), as its administrator: connected. */
export async function adminClient(server) {
  const c = new pg.Client({
    host: server.socketDir,
    port: server.port,
    user: server.user,
    database: 'postgres',
  });
  await c.connect();
  return c;
}

/** Creates the database `name` on `server` (test/helpers/pg-server.ts) and returns its URL. */
export async function createDatabase(server, name) {
  const admin = await adminClient(server);
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return `postgres://${server.user}@localhost:${server.port}/${name}?host=${encodeURIComponent(server.socketDir)}`;
}
