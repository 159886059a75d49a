// Foundation figures: `ii job list --json` over a state of 1,000 jobs and
// 10,000 commits, as a ratio to `node -e 0` (process start, the floor any CLI
// pays), and to Node printing the same bytes (its start and its output's
// way to the reader: a report); and the latency of one job mutation, as a
// ratio to an empty write transaction on the same database.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, quantile, round, sample } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { openStateStore, repoSlug } = await import(join(root, 'dist', 'src', 'state', 'index.js'));

function seed(stateDir, slug, jobs = 1000, commitsPerJob = 10) {
  const store = openStateStore({ dir: join(stateDir, 'incrementum') });
  const todo = store.todos.create(slug, { title: 'benchmark todo' });
  for (let j = 0; j < jobs; j++) {
    const job = store.jobs.create(slug, { todo_id: todo.id });
    store.jobs.appendChange(job.id, `I${j.toString(16).padStart(40, '0')}`);
    for (let c = 0; c < commitsPerJob; c++) {
      store.jobs.appendCommit(job.id, {
        commit_id: `${j}-${c}`.padEnd(40, '0'),
        draft_message: 'feat: something',
        files: [{ path: 'src/a.ts', is_new: false, is_deleted: false, additions: 3, deletions: 1 }],
      });
      store.jobs.updateCurrentCommit(job.id, { tests_passed: true });
    }
    if (j % 3 === 0) store.jobs.finish(job.id, 'completed');
  }
  // The store as its writers leave it: a job's listing text is made 200 ms
  // after a burst of writes, or by a listing on the writing connection
  // (state/sqlite/job-json.ts), and this loop never lets the timer run.
  store.jobs.listJson(slug);
  return store;
}

/** This process's waited-for children's CPU time so far, in ms (0 where /proc is not there). */
function childCpuMs() {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8');
    // pid (comm) state … utime(14) stime(15) cutime(16) cstime(17); comm may hold spaces.
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return 0;
  }
}

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-'));
  try {
    const repo = join(tmp, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    const stateHome = join(tmp, 'state');
    const store = seed(stateHome, repoSlug(repo));
    const env = { ...process.env, XDG_STATE_HOME: stateHome, NO_COLOR: '1' };
    const ii = join(root, 'bin', 'ii.js');
    // Its output is read as bytes: decoded into a string here, the 5 MB cost
    // this process ~20 ms after ii had exited (spawnSync of cat on the same
    // bytes: 80 ms decoded, 61 as bytes, 12 for an empty file), counted as ii's.
    const list = () => {
      const r = spawnSync(process.execPath, [ii, 'job', 'list', '--json', '--all'], {
        cwd: repo,
        env,
        maxBuffer: 1 << 28,
      });
      if (r.status !== 0) throw new Error(`ii job list failed: ${r.stderr}`);
      return r.stdout;
    };
    const floor = () => spawnSync(process.execPath, ['-e', '0']);
    // Once, untimed (it also warms the page cache): the listing is every job, whole.
    const listing = list();
    const jobsListed = JSON.parse(listing.toString('utf8'));
    if (jobsListed.length !== 1000 || jobsListed.some((j) => j.changes[0]?.commits.length !== 10))
      throw new Error('ii job list --json did not list the 1,000 seeded jobs with their 10 commits each');
    // A second floor: Node printing the same bytes, to the same reader (what
    // any command that prints this listing pays for its start and its output).
    const printed = join(tmp, 'listing.json');
    writeFileSync(printed, listing);
    const printFloor = () =>
      spawnSync(
        process.execPath,
        ['-e', `process.stdout.write(require('node:fs').readFileSync(${JSON.stringify(printed)}))`],
        { maxBuffer: 1 << 28 },
      );
    const n = 12;
    const listMs = [];
    const floorMs = [];
    const printMs = [];
    // CPU time (user + system) of the waited-for children, which load does
    // not stretch as it does the wall clock: /proc/self/stat's cutime and
    // cstime, in clock ticks (10 ms), summed over every run of each.
    let listCpu = 0;
    let floorCpu = 0;
    // Interleave so both see the same machine load.
    for (let i = 0; i < n; i++) {
      let c = childCpuMs();
      listMs.push(...(await sample(1, list)));
      listCpu += childCpuMs() - c;
      c = childCpuMs();
      floorMs.push(...(await sample(1, floor)));
      floorCpu += childCpuMs() - c;
      printMs.push(...(await sample(1, printFloor)));
    }

    // A mutation rewrites the job's listing text (job-json.ts), so its cost
    // grows with the job: measured on jobs of a usual size (50 jobs growing
    // to 10 commits each) and on one job growing to 500 commits.
    const jobs = Array.from({ length: 50 }, () => {
      const j = store.jobs.create(repoSlug(repo), { todo_id: 'x' });
      store.jobs.appendChange(j.id, 'Ibench');
      return j.id;
    });
    let i = 0;
    const mutation = await sample(500, () => store.jobs.appendCommit(jobs[i % 50], { commit_id: `m${i++}` }));
    const big = store.jobs.create(repoSlug(repo), { todo_id: 'x' });
    store.jobs.appendChange(big.id, 'Ibench');
    const bigMutation = await sample(500, () => store.jobs.appendCommit(big.id, { commit_id: `b${i++}` }));
    // The floor: the cheapest durable write on the same file, through a second connection.
    const { DatabaseSync } = await import('node:sqlite');
    const raw = new DatabaseSync(store.dbPath);
    raw.exec(
      'PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL; CREATE TABLE IF NOT EXISTS bench_floor (x INTEGER)',
    );
    const tx = await sample(500, () => {
      raw.exec('BEGIN IMMEDIATE');
      raw.prepare('INSERT INTO bench_floor VALUES (1)').run();
      raw.exec('COMMIT');
    });
    raw.close();
    store.close();

    const lm = median(listMs);
    const fm = median(floorMs);
    return [
      {
        name: 'ii job list --json (1,000 jobs, 10,000 commits) median',
        value: round(lm),
        unit: 'ms',
        floor: round(fm),
        ratio: round(lm / fm),
        goal: '≤ 2× node -e 0',
      },
      {
        name: `ii job list --json (1,000 jobs, 10,000 commits) vs node printing its ${round(listing.length / 1e6, 1)} MB, median`,
        value: round(lm),
        unit: 'ms',
        floor: round(median(printMs)),
        ratio: round(lm / median(printMs)),
        goal: 'report',
      },
      ...(listCpu > 0 && floorCpu > 0
        ? [
            {
              name: 'ii job list --json (1,000 jobs, 10,000 commits) CPU mean',
              value: round(listCpu / n),
              unit: 'ms',
              floor: round(floorCpu / n),
              ratio: round(listCpu / floorCpu),
              goal: '≤ 2× node -e 0',
            },
          ]
        : []),
      {
        name: 'job mutation (append commit, jobs of ≤ 10 commits) median',
        value: round(median(mutation), 3),
        unit: 'ms',
        floor: round(median(tx), 3),
        ratio: round(median(mutation) / median(tx)),
        goal: 'report',
      },
      {
        name: 'job mutation (append commit, jobs of ≤ 10 commits) p95',
        value: round(quantile(mutation, 0.95), 3),
        unit: 'ms',
        floor: round(quantile(tx, 0.95), 3),
        ratio: round(quantile(mutation, 0.95) / quantile(tx, 0.95)),
        goal: 'report',
      },
      {
        name: 'job mutation (append commit, one job growing to 500) median',
        value: round(median(bigMutation), 3),
        unit: 'ms',
        floor: round(median(tx), 3),
        ratio: round(median(bigMutation) / median(tx)),
        goal: 'report',
      },
    ];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
