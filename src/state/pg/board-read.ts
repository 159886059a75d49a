// What a board's copy of a shared store reads (dashboard/io/board-source.ts),
// as one round trip: the store's version, the jobs written after the version
// the board holds with their children, the repository's todos, job briefs
// and runners, sent together as one simple query (Q.many). Asked for one
// after another, they were five or six waits on the socket per refresh, and
// a refresh follows every few writes of every machine's jobs.
import pg from 'pg';
import type { BoardRead } from '../async-api.js';
import { toRunner, type RunnerRow } from '../sqlite/small-stores.js';
import { toTodo, type TodoRow } from '../sqlite/todos.js';
import type { PgDb } from './db.js';
import { briefs, briefsOf, childReads, JOB_COLUMNS, jobsOfRows } from './jobs.js';

export function pgBoardRead(db: PgDb) {
  return async (repo: string | null, after: number, wholeBriefs: boolean): Promise<BoardRead> => {
    const r = repo === null ? null : pg.escapeLiteral(repo);
    // -1: every job of the scope (a job's version is set as its first write commits).
    const jobsWhere =
      [r === null ? null : `repo = ${r}`, after < 0 ? null : `changed_version > ${Math.trunc(after)}`]
        .filter((w) => w !== null)
        .join(' AND ') || 'TRUE';
    // Each statement sees what was committed when it started (READ COMMITTED),
    // the version first: what a later one reads is that version's or newer,
    // and what is newer is read again at the next version, as before. The
    // children of a job written in between, read without its row, are passed over.
    const sqls = [
      "SELECT value FROM meta WHERE key = 'version'",
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE ${jobsWhere} ORDER BY started_at DESC, id`,
      // ANY(ARRAY(…)): the ids made once, then each table's job_id index, as
      // with load()'s array constant (in job_id's collation: pg/jobs.ts JOB_ID).
      ...childReads(`ARRAY(SELECT id COLLATE "default" FROM jobs WHERE ${jobsWhere})`),
      r === null
        ? // Every repository's board holds only the titles of its jobs' todos.
          `SELECT t.* FROM todos t WHERE (t.repo, t.id) IN (SELECT repo, todo_id FROM jobs WHERE ${jobsWhere})`
        : `SELECT * FROM todos WHERE repo = ${r}${after < 0 ? '' : ` AND changed_version > ${Math.trunc(after)}`} ORDER BY priority, created_at`,
      ...(r === null
        ? []
        : [
            wholeBriefs ? briefsOf(r) : `${briefsOf(r)} AND j.changed_version > ${Math.trunc(after)}`,
            `SELECT * FROM runners WHERE repo = ${r} ORDER BY id`,
          ]),
    ];
    const [version = [], jobRows = [], ...rest] = await db.many(sqls);
    const children = rest.slice(0, 5);
    const [todoRows = [], briefRows = [], runnerRows = []] = rest.slice(5);
    return {
      version: (version[0] as { value: number }).value,
      jobs: jobRows.length ? jobsOfRows(jobRows, children) : [],
      todos: (todoRows as unknown as TodoRow[]).map(toTodo),
      briefs: r === null ? null : briefs(briefRows),
      runners: r === null ? null : (runnerRows as unknown as RunnerRow[]).map(toRunner),
    };
  };
}
