// Journal figures: building a journal (three git commands, the event log, the
// job record) for a job with 100 iterations and an event log of ~5 MB of test
// output, as a ratio to one `git --version` (the cheapest child process the
// build pays three of); and reusing an up-to-date journal, as a ratio to
// reading and parsing its journal.json (the least a reuse must do).
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, round, sample } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { openStateStore, repoSlug } = await import(join(root, 'dist', 'src', 'state', 'index.js'));
const { writeJournal } = await import(join(root, 'dist', 'src', 'journal', 'index.js'));

export async function run() {
  const tmp = mkdtempSync(join(tmpdir(), 'ii-bench-journal-'));
  try {
    const repo = join(tmp, 'repo');
    mkdirSync(repo);
    const git = (...a) => execFileSync('git', a, { cwd: repo, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    git('config', 'user.email', 'b@example.com');
    git('config', 'user.name', 'bench');
    writeFileSync(join(repo, 'a.txt'), '0\n');
    git('add', '-A');
    git('commit', '-qm', 'base');
    const base = git('rev-parse', 'HEAD');
    const stateDir = join(tmp, 'state', 'incrementum');
    const store = openStateStore({ dir: stateDir });
    const slug = repoSlug(repo);
    const todo = store.todos.create(slug, { title: 'bench' });
    const job = store.jobs.create(slug, { todo_id: todo.id, base_rev: base });
    const events = join(stateDir, 'jobs', job.id, 'events.jsonl');
    mkdirSync(dirname(events), { recursive: true });
    let head = base;
    for (let c = 0; c < 20; c++) {
      store.jobs.appendChange(job.id, `I${c}`);
      for (let i = 0; i < 5; i++) {
        store.jobs.appendCommit(job.id, { commit_id: `${c}-${i}` });
        const lines = [];
        for (let k = 0; k < 250; k++)
          lines.push(
            JSON.stringify({
              ts: 't',
              type: 'test_output',
              command: 'npm test',
              stream: 'stdout',
              text: `line ${k} ${'x'.repeat(150)}\n`,
            }),
          );
        lines.push(
          JSON.stringify({
            ts: 't',
            type: 'test_end',
            command: 'npm test',
            exit_code: i < 4 ? 1 : 0,
            duration_ms: 5,
          }),
        );
        appendFileSync(events, lines.join('\n') + '\n');
        store.jobs.updateCurrentCommit(job.id, {
          tests_passed: i === 4,
          test_results: [{ command: 'npm test', exit_code: i < 4 ? 1 : 0, duration_ms: 5 }],
          ...(i === 4
            ? { review: { outcome: 'ACCEPT', comments: '', agent_session_id: null, reviewed_at: 't' } }
            : {}),
        });
      }
      writeFileSync(join(repo, `f${c}.txt`), `${c}\n`.repeat(50));
      git('add', '-A');
      git('commit', '-qm', `change ${c}`);
      head = git('rev-parse', 'HEAD');
      appendFileSync(events, JSON.stringify({ ts: 't', type: 'info', commit_id: head }) + '\n');
    }
    store.jobs.finish(job.id, 'completed');

    const build = () => writeJournal(store, stateDir, job.id, { repoRoot: repo, force: true });
    const reuse = async () => {
      const w = await writeJournal(store, stateDir, job.id, { repoRoot: repo });
      if (!w.reused) throw new Error('the journal was rebuilt although nothing changed');
    };
    const gitFloor = () => execFileSync('git', ['--version']);
    const jsonPath = join(stateDir, 'jobs', job.id, 'journal.json');
    const readFloor = () => JSON.parse(readFileSync(jsonPath, 'utf8'));
    await build();
    const b = [];
    const g = [];
    const r = [];
    const f = [];
    for (let i = 0; i < 10; i++) {
      b.push(...(await sample(1, build)));
      g.push(...(await sample(1, gitFloor)));
      r.push(...(await sample(5, reuse)));
      f.push(...(await sample(5, readFloor)));
    }
    store.close();
    const bm = median(b);
    const gm = median(g);
    const rm = median(r);
    const fm = median(f);
    return [
      {
        name: 'build (100 iterations, 5 MB log)',
        value: round(bm),
        unit: 'ms',
        floor: round(gm),
        ratio: round(bm / gm),
        goal: 'the same order as a few git spawns',
      },
      {
        name: 'reuse an up-to-date journal',
        value: round(rm),
        unit: 'ms',
        floor: round(fm),
        ratio: round(rm / fm),
        goal: 'a small multiple of reading journal.json',
      },
    ];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
