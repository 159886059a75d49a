// Where jobs start in a clone whose main is ahead of its remote: a real bare
// "remote", a clone of it, a commit made only in the clone. ii job do and
// ii run start from the local branch (never origin/main unless --rev asks),
// and what they print and record names the ref and the commit really used.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, write } from '../helpers/job.js';

let f: JobFixture;
let upstream: string;
let local: string;

beforeEach(() => {
  f = new JobFixture('ii-clone-base-');
  const origin = f.setup();
  const remote = join(f.tmp.path, 'remote.git');
  const clone = join(f.tmp.path, 'clone');
  execFileSync('git', ['clone', '-q', '--bare', origin, remote]);
  execFileSync('git', ['clone', '-q', remote, clone]);
  f.repo = clone;
  f.git('config', 'user.name', 'Test');
  f.git('config', 'user.email', 'test@example.com');
  upstream = f.git('rev-parse', 'origin/main').trim();
  expect(f.git('symbolic-ref', 'refs/remotes/origin/HEAD').trim()).toBe('refs/remotes/origin/main');
  // Committed only here: the tests now need local.txt, which origin/main lacks.
  writeFileSync(
    join(clone, 'incrementum.toml'),
    `[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["test -f local.txt"]\nauto-commit = false\n`,
  );
  writeFileSync(join(clone, 'local.txt'), 'only in the clone\n');
  f.git('add', '-A');
  f.git('commit', '-qm', 'local config');
  local = f.git('rev-parse', 'main').trim();
  expect(f.git('rev-list', '--count', 'origin/main..main').trim()).toBe('1');
});
afterEach(() => f.cleanup());

interface Rec {
  id: string;
  todo_id: string;
  status: string;
  base_rev: string;
  base_branch: string | null;
  started_at: string;
  landed: { onto: string; commit: string; at: string } | null;
}

describe('jobs in a clone ahead of its remote', () => {
  it('ii job do starts from the local main and says so; --rev origin/main only when asked', () => {
    const s = f.scenario('job', {
      implement: [{ actions: [write('hello.txt', 'hi\n')] }],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Job work' }] }],
    });
    const r = f.run(['job', 'do', '--title', 'work'], s);
    expect(r.code, r.stderr).toBe(0);
    const id = jobIdFrom(r.stderr);
    expect(r.stderr).toMatch(
      new RegExp(`  workspace: \\S+  \\S+  at ${local.slice(0, 10)} \\(from main\\)\n`),
    );
    const job = f.show(id) as unknown as Rec;
    expect(job.base_rev).toBe(local);
    expect(job.base_branch).toBe('main');
    expect(f.run(['job', 'show', id]).stdout).toContain(`base rev:  ${local} (from main)`);
    // It lands on the local main; the remote-tracking ref is not touched.
    const landed = f.run(['job', 'land', id]);
    expect(landed.code, landed.stderr).toBe(0);
    expect(f.git('rev-parse', 'main^').trim()).toBe(local);
    expect(f.git('rev-parse', 'origin/main').trim()).toBe(upstream);

    // Asked for, the remote's branch is used, and named (its tests fail
    // there: origin/main has no local.txt).
    const asked = f.run(['job', 'do', '--title', 'on origin', '--rev', 'origin/main'], s);
    expect(asked.stderr).toMatch(
      new RegExp(`  workspace: \\S+  \\S+  at ${upstream.slice(0, 10)} \\(from origin/main\\)\n`),
    );
    const other = f.show(jobIdFrom(asked.stderr)) as unknown as Rec;
    expect(other.base_rev).toBe(upstream);
    expect(other.base_branch).toBeNull();
  });

  it("ii run --land starts each job from the local main: a dependent todo from its dep's landed commit", async () => {
    const create = (title: string, ...more: string[]) =>
      f.run(['todo', 'create', '--title', title, ...more]).stdout.trim();
    const a = create('A');
    const b = create('B', '--deps', a);
    const scenarios = join(f.tmp.path, 'scenarios');
    mkdirSync(scenarios);
    for (const [id, n] of [
      [a, 'a'],
      [b, 'b'],
    ] as const)
      writeFileSync(
        join(scenarios, `${id}.json`),
        JSON.stringify({
          implement: [{ actions: [write(`${n}.txt`, `${n}\n`)] }, { actions: [] }],
        }),
      );
    const r = await f.runAsync(['run', '--jobs', '2', '--land'], scenarios);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`jobs start from main, as it is when each starts (now ${local.slice(0, 10)})`);
    expect(r.stderr).toContain('landed 2 jobs');
    const list = JSON.parse(f.run(['job', 'list', '--all', '--json']).stdout) as Rec[];
    const byTodo = new Map(list.map((j) => [j.todo_id, j]));
    const ja = byTodo.get(a)!;
    const jb = byTodo.get(b)!;
    expect(ja.base_rev).toBe(local);
    expect(ja.base_branch).toBe('main');
    // B started from main with A's landed commit on it, not from origin/main.
    expect(jb.base_rev).toBe(ja.landed!.commit);
    expect(jb.base_branch).toBe('main');
    expect(f.git('rev-parse', 'main').trim()).toBe(jb.landed!.commit);
    expect(f.git('rev-parse', 'origin/main').trim()).toBe(upstream);
  }, 240_000);

  it("ii run keeps the branch it started from: a checkout switched during the run changes no later job's base", async () => {
    const create = (title: string, ...more: string[]) =>
      f.run(['todo', 'create', '--title', title, ...more]).stdout.trim();
    const a = create('A');
    const b = create('B', '--deps', a);
    const scenarios = join(f.tmp.path, 'scenarios');
    mkdirSync(scenarios);
    // A's agent switches the person's checkout to another branch, with a
    // commit of its own, before B (which waits for A) starts.
    const sw = `git -C '${f.repo}' checkout -q -b other && git -C '${f.repo}' commit -q --allow-empty -m other`;
    // Unsandboxed (the user's config): the agent stands in for the person
    // switching their checkout, which the job sandbox would refuse it.
    const userConfig = join(f.env.XDG_CONFIG_HOME!, 'incrementum');
    mkdirSync(userConfig, { recursive: true });
    writeFileSync(join(userConfig, 'config.toml'), '[sandbox]\nmode = "off"\n');
    writeFileSync(
      join(scenarios, `${a}.json`),
      JSON.stringify({
        implement: [{ actions: [write('a.txt', 'a\n'), { type: 'shell', command: sw }] }, { actions: [] }],
      }),
    );
    writeFileSync(
      join(scenarios, `${b}.json`),
      JSON.stringify({ implement: [{ actions: [write('b.txt', 'b\n')] }, { actions: [] }] }),
    );
    const r = await f.runAsync(['run', '--jobs', '1'], scenarios);
    expect(r.code, r.stderr).toBe(0);
    expect(f.git('symbolic-ref', '--short', 'HEAD').trim()).toBe('other');
    const list = JSON.parse(f.run(['job', 'list', '--all', '--json']).stdout) as Rec[];
    const jb = list.find((j) => j.todo_id === b)!;
    expect(jb.status).toBe('completed');
    expect(jb.base_branch).toBe('main');
    expect(jb.base_rev).toBe(local);
  }, 240_000);

  it('ii run --rev origin/main: the remote branch when asked for, named, for every job', async () => {
    const t = f.run(['todo', 'create', '--title', 'T']).stdout.trim();
    const r = await f.runAsync(['run', '--jobs', '1', '--rev', 'origin/main']);
    expect(r.stderr).toContain(
      `jobs start from origin/main, as it is when each starts (now ${upstream.slice(0, 10)})`,
    );
    const job = (JSON.parse(f.run(['job', 'list', '--all', '--json']).stdout) as Rec[]).find(
      (j) => j.todo_id === t,
    )!;
    expect(job.base_rev).toBe(upstream);
    expect(job.base_branch).toBeNull();
    // origin/main lacks the local commit's local.txt: its baseline tests fail there.
    expect(job.status).toBe('failed');
    expect(r.code).toBe(1);
  }, 240_000);
});
