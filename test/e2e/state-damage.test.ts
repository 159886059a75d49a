// A state.db with one damaged b-tree page, made the way it happens: a real
// store written by the CLI (todos, two jobs run by the scripted agent), then
// one page of the jobs table overwritten with garbage. The command that meets
// the page stops with exit 3 and the clear message; every command after it
// leaves the file, its WAL and -shm byte for byte as they were; ii doctor
// reports it.
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { JobFixture, write } from '../helpers/job.js';
import { hasTmux, Tmux } from '../helpers/tmux.js';

let fx: JobFixture;
let db: string;
let pristine: string;

// One real store for the file (the CLI is slow to drive on a busy machine);
// each test starts from a copy of it.
beforeAll(() => {
  fx = new JobFixture('ii-damage-');
  fx.setup();
  db = join(fx.tmp.path, 'state', 'incrementum', 'state.db');
  buildStore();
  pristine = join(fx.tmp.path, 'pristine.db');
  copyFileSync(db, pristine);
}, 120_000);
afterAll(() => fx.tmp.cleanup());
beforeEach(() => {
  for (const f of ['', '-wal', '-shm', '-damaged']) rmSync(`${db}${f}`, { force: true });
  copyFileSync(pristine, db);
});

/** A real store: todos and two finished jobs, each with a change and its iteration. */
function buildStore(): void {
  for (let i = 0; i < 3; i++) expect(fx.run(['todo', 'create', '--title', `todo ${i}`]).code).toBe(0);
  for (let i = 0; i < 2; i++) {
    const s = fx.scenario(`job${i}`, {
      implement: [{ actions: [write(`f${i}.txt`, 'hi\n')] }],
      'commit-message': [{ actions: [{ type: 'commit_message', text: `Add f${i}` }] }],
    });
    const r = fx.run(['job', 'do', '--title', `job ${i}`], s);
    expect(r.code, r.stderr).toBe(0);
  }
}

/** Overwrites one leaf page of `table` with garbage; returns its number. */
function damagePageOf(table: string): number {
  const raw = new DatabaseSync(db, { readOnly: true });
  const { page_size } = raw.prepare('PRAGMA page_size').get() as { page_size: number };
  const leaf = raw
    .prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1")
    .get(table) as { pageno: number } | undefined;
  raw.close();
  if (!leaf) throw new Error(`no leaf page of ${table}`);
  const garbage = Buffer.alloc(page_size);
  for (let i = 0; i < page_size; i++) garbage[i] = (i * 131 + 7) & 0xff;
  const fd = openSync(db, 'r+');
  writeSync(fd, garbage, 0, page_size, (leaf.pageno - 1) * page_size);
  closeSync(fd);
  return leaf.pageno;
}

/** The database, its WAL and -shm, each as a hash (or "absent"). */
function files(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of [db, `${db}-wal`, `${db}-shm`])
    out[f.slice(db.length) || 'db'] = existsSync(f)
      ? createHash('sha256').update(readFileSync(f)).digest('hex')
      : 'absent';
  return out;
}

function expectDamageMessage(stderr: string): void {
  expect(stderr).toContain(`state database ${db} is damaged`);
  expect(stderr).toMatch(/\.recover/);
  expect(stderr).toContain('mv ');
  expect(stderr).not.toMatch(/^\s+at /m); // no stack trace
  expect(stderr).not.toContain('internal error');
}

describe('a damaged state.db', () => {
  it('the command that meets the bad page exits 3; every command after it writes nothing; doctor reports it', async () => {
    damagePageOf('jobs');

    const met = fx.run(['job', 'list', '--all']);
    expect(met.code, met.stderr).toBe(3);
    expectDamageMessage(met.stderr);
    expect(met.stderr).toContain('SQLITE_CORRUPT');
    const before = files();

    const after: string[][] = [
      ['todo', 'list'],
      ['todo', 'create', '--title', 'written after the damage'],
      ['job', 'do', '--title', 'a job after the damage'],
      ['job', 'list'],
      ['job', 'list', '--json'],
      ['workspace', 'list'],
    ];
    for (const args of after) {
      const r = fx.run(args, fx.scenario('later', {}));
      expect(r.code, `ii ${args.join(' ')}: ${r.stderr}`).toBe(3);
      expectDamageMessage(r.stderr);
      expect(r.stderr).toContain('nothing has been written to it since');
      expect(files(), `ii ${args.join(' ')} changed the files`).toEqual(before);
    }

    if (hasTmux) {
      const t = new Tmux(fx.tmp.path);
      try {
        t.start([process.execPath, II, 'dashboard'], {
          cwd: fx.repo,
          rows: 60,
          env: Object.fromEntries(Object.entries(fx.env).filter((e): e is [string, string] => !!e[1])),
        });
        expect(await t.exitStatus()).toBe(3);
        const screen = t.capture().replaceAll('\n', ''); // lines wrap at the pane's width
        expect(screen).toContain('nothing has been written to it since');
        expect(screen).toContain('.recover');
        expect(screen).not.toContain('internal error');
      } finally {
        t.kill();
      }
      expect(files(), 'ii dashboard changed the files').toEqual(before);
    }

    const doctor = fx.run(['doctor', '--agent', 'scripted']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/FAIL state .*state\.db is damaged: integrity check failed: .*page/);
    expect(doctor.stdout).toContain('.recover');
    expect(files(), 'ii doctor changed the files').toEqual(before);
  });

  it('ii job do checks the store before it creates a todo, a workspace or a job', () => {
    damagePageOf('jobs');
    const before = files().db;
    const r = fx.run(['job', 'do', '--title', 'first to meet it'], fx.scenario('first', {}));
    expect(r.code, r.stderr).toBe(3);
    expectDamageMessage(r.stderr);
    expect(r.stderr).toContain('integrity check failed');
    expect(files().db).toBe(before);
  });

  it('moved aside as the message says, a fresh store works again', () => {
    damagePageOf('jobs');
    expect(fx.run(['job', 'list', '--all']).code).toBe(3);
    const aside = join(fx.tmp.path, 'aside');
    mkdirSync(aside);
    for (const f of ['state.db', 'state.db-wal', 'state.db-shm', 'state.db-damaged'])
      if (existsSync(join(db, '..', f))) renameSync(join(db, '..', f), join(aside, f));
    const r = fx.run(['todo', 'create', '--title', 'fresh start']);
    expect(r.code, r.stderr).toBe(0);
    expect(fx.run(['todo', 'list']).stdout).toContain('fresh start');
  });
});
