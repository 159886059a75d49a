// A remote that hangs, and ii stopped while git talks to it. git's push,
// fetch and ls-remote run in a session of their own (a timeout ends git with
// its helpers), out of reach of the terminal's Ctrl-C: ii must end them
// itself. The "remote" is a bare repository whose upload-pack or
// receive-pack (remote.origin.uploadpack / receivepack, run by git through
// the shell for a local path) is a script that sleeps: local, no network.
// What is left is looked for in /proc by the test's temp dir (in a process's
// command line or working directory).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateStore } from '../../src/state/index.js';
import { JobFixture, delay, jobIdFrom, verdict, write, type RunningJob } from '../helpers/job.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { isRunning, runningUnder, runningWith } from '../helpers/procs.js';
import { waitFor } from '../helpers/tmp.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-hang-');
});
afterEach(() => {
  // What a failing run left: ended here, not left to the machine.
  for (const p of leftBehind()) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {}
  }
  f.cleanup();
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The live processes whose command line or working directory names the test's temp dir. */
const leftBehind = () => runningUnder(f.tmp.path);

/** A script that never answers: the remote's side of a fetch or push. */
function hangScript(): string {
  const p = join(f.tmp.path, 'hang.sh');
  writeFileSync(p, '#!/bin/sh\nsleep 600\n', { mode: 0o755 });
  return p;
}

/** The bare repository the fixture's repo gets as origin. */
function sharedRemote(): string {
  const bare = join(f.tmp.path, 'shared.git');
  git(f.tmp.path, 'clone', '-q', '--bare', f.repo, bare);
  f.git('remote', 'add', 'origin', bare);
  f.git('fetch', '-q', 'origin');
  return bare;
}

// Longer than any bound below: the old code, which waited on the remote, fails them.
const PUSH_ON = '\n[remote]\npush = true\ntimeout-seconds = 300\n';

/** A completed job whose refs are on the remote. */
function completedJob(): string {
  const r = f.run(
    ['job', 'do', '--title', 'greet'],
    f.scenario('job', {
      implement: [{ actions: [write('hello.txt', 'hello\n')] }],
      review: [verdict('ACCEPT', '')],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Greet' }] }],
    }),
  );
  expect(r.code, r.stderr).toBe(0);
  return jobIdFrom(r.stderr);
}

/**
 * A job completed on machine A, seen from B: a fresh clone of the remote
 * lacking the job's commits, whose remote then hangs on a fetch. Its id.
 */
function anotherMachinesJob(): string {
  f.setup(['test -f README.md'], { job: PUSH_ON });
  const bare = sharedRemote();
  const id = completedJob();
  renameSync(f.repo, join(f.tmp.path, 'machine-a'));
  git(f.tmp.path, 'clone', '-q', '--no-local', bare, f.repo);
  f.git('config', 'remote.origin.uploadpack', hangScript());
  return id;
}

describe('a remote that hangs', () => {
  it('Ctrl-C of ii job diff during its fetch ends git and the remote side with it: nothing is left running', async () => {
    const id = anotherMachinesJob();

    const diff = f.spawn(['job', 'diff', id]);
    await waitFor(
      () => leftBehind().some((p) => p.cmd.includes('hang.sh')),
      `the fetch to hang (stderr: ${diff.stderr()})`,
      60_000,
    );
    expect(diff.stderr()).toContain(`fetching job ${id}'s refs from the remote origin`);
    diff.child.kill('SIGINT'); // what Ctrl-C sends: to ii, the terminal's foreground group
    await diff.exit;
    // It still dies of the signal, as with no handler at all.
    expect(diff.child.signalCode).toBe('SIGINT');
    await waitFor(
      () => leftBehind().length === 0,
      `nothing left running: ${JSON.stringify(leftBehind())}`,
      10_000,
    );
  });

  it('a job cancelled while its push hangs ends at once, leaves nothing running, and says which refs to push by hand', async () => {
    f.setup(['test -f README.md'], { job: PUSH_ON });
    sharedRemote();
    f.git('config', 'remote.origin.receivepack', hangScript());
    // The first iteration's push hangs; the review waits: the job is running when it is cancelled.
    const job = f.spawn(
      ['job', 'do', '--title', 'greet'],
      f.scenario('job', {
        implement: [{ actions: [write('hello.txt', 'hello\n')] }],
        review: [delay(600_000)],
      }),
    );
    await waitFor(
      () => leftBehind().some((p) => p.cmd.includes('hang.sh')),
      `the push to hang (stderr: ${job.stderr()})`,
      60_000,
    );
    job.child.kill('SIGINT');
    // Bounded well under the remote's timeout (300 s): the old code waited for it, and then once more.
    const ended = await Promise.race([
      job.exit.then(() => true),
      new Promise((r) => setTimeout(r, 45_000, false)),
    ]);
    expect(ended, `ii job do still running after Ctrl-C: ${job.stderr()}`).toBe(true);
    expect(job.child.exitCode).toBe(1);
    await waitFor(
      () => leftBehind().length === 0,
      `nothing left running: ${JSON.stringify(leftBehind())}`,
      10_000,
    );
    const id = jobIdFrom(job.stderr());
    const events = readFileSync(join(f.tmp.path, 'state', 'incrementum', 'jobs', id, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; message?: string });
    const warnings = events.filter((e) => e.type === 'warning').map((e) => e.message ?? '');
    const change = f.show(id).changes[0]!.change_id;
    const refs = `refs/incrementum/changes/${change}/*`;
    expect(warnings.some((w) => w.includes('were not pushed') && w.includes(refs))).toBe(true);
    expect(warnings.some((w) => w.includes(`git push origin '+${refs}:${refs}'`))).toBe(true);
    // Not promised again: there is no next iteration.
    expect(warnings.some((w) => w.includes('tried again'))).toBe(false);
  });

  it("kill -9 of a runner mid-push: the push's group was recorded for the job, and the next command that meets the dead runner ends it", async () => {
    f.setup(['test -f README.md'], { job: PUSH_ON });
    sharedRemote();
    f.git('config', 'remote.origin.receivepack', hangScript());
    const job = f.spawn(
      ['job', 'do', '--title', 'greet'],
      f.scenario('job', {
        implement: [{ actions: [write('hello.txt', 'hello\n')] }],
        review: [delay(600_000)],
      }),
    );
    await waitFor(
      () => leftBehind().some((p) => p.cmd.includes('hang.sh')),
      `the push to hang (stderr: ${job.stderr()})`,
      60_000,
    );
    const id = jobIdFrom(job.stderr());
    // The runner records the push's group just after git and its guard have
    // started, and git can reach the remote's hang.sh first: the kill waits
    // for the record (a kill -9 before it is the guard's alone to clean up).
    const store = openStateStore({ dir: join(f.tmp.path, 'state', 'incrementum') });
    const pushes = () => store.processGroups.list({ job_id: id }).filter((g) => g.label === 'git push');
    try {
      await waitFor(() => pushes().length > 0, `the push's group to be recorded (stderr: ${job.stderr()})`);
      job.child.kill('SIGKILL');
      await job.exit;
      // Still there after the kill: the push's guard (src/vcs/git-groups.ts) may end the push first, but nothing drops its record.
      expect(pushes()).toHaveLength(1);
    } finally {
      store.close();
    }
    // The scripted agent is ended by the same cleanup (its group is recorded too): what is checked is the push.
    const r = f.run(['job', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`job ${id} failed \\(its runner was gone\\)`));
    await waitFor(
      () => leftBehind().length === 0,
      `nothing left running: ${JSON.stringify(leftBehind())}`,
      10_000,
    );
  });
});

// kill -9 of a command outside any job while its git talks to the remote:
// ii job diff's fetch, ii job land's push, ii doctor's ls-remote (on a
// shared store: only there does doctor ask the remote). SIGKILL runs none
// of ii's handlers, and there is no job record for a later cleanup to end
// them from: each group's guard (src/vcs/git-groups.ts) must. Also ii job
// logs -f, SIGKILLed while it follows a running job: nothing it started may
// be left.
/** Waits for the remote to hang under `cmd`, SIGKILLs it, and waits for nothing of it to be left. */
async function killMidCall(cmd: RunningJob, what: string): Promise<void> {
  await waitFor(
    () => leftBehind().some((p) => p.cmd.includes('hang.sh')),
    `${what} to hang (stderr: ${cmd.stderr()})`,
    60_000,
  );
  // git's remote calls lead their groups: each has its guard (src/vcs/git-groups.ts), which must go too.
  const leaders = leftBehind()
    .filter((p) => p.cmd.startsWith('git '))
    .map((p) => p.pid);
  expect(leaders.length).toBeGreaterThan(0);
  cmd.child.kill('SIGKILL');
  await cmd.exit;
  expect(cmd.child.signalCode).toBe('SIGKILL');
  await waitFor(
    () => {
      const left = [
        ...leftBehind(),
        ...leaders.flatMap((pid) =>
          runningWith(`ii-git-guard ${pid} `).map((g) => ({ pid: g, cmd: 'guard' })),
        ),
      ];
      if (left.length) throw new Error(`still running: ${JSON.stringify(left)}`);
      return true;
    },
    'nothing left running',
    15_000,
  );
}

describe('kill -9 while git talks to a remote that hangs', () => {
  it("ii job diff during its fetch of another machine's job", async () => {
    const id = anotherMachinesJob();
    await killMidCall(f.spawn(['job', 'diff', id]), 'the fetch');
  });

  it('ii job land during its push', async () => {
    f.setup(['test -f README.md'], { job: PUSH_ON });
    sharedRemote();
    const id = completedJob();
    f.git('config', 'remote.origin.receivepack', hangScript());
    await killMidCall(f.spawn(['job', 'land', id, '--no-test']), 'the push');
  });

  describe.skipIf(!pgServer())(`on a shared store${pgServer() ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
    const db = usePgDatabase({ prefix: 'ii_kill9' });
    it('ii doctor during its ls-remote of the shared remote', async () => {
      f.setup();
      sharedRemote();
      f.git('config', 'remote.origin.uploadpack', hangScript());
      f.env.II_DATABASE_URL = db.url;
      await killMidCall(f.spawn(['doctor']), 'the ls-remote');
    });
  });
});

/** `pid` and every live process below it, now. */
function tree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {} // gone meanwhile
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out.filter(isRunning);
}

it('kill -9 of ii job logs -f while it follows a running job leaves nothing it started', async () => {
  f.setup();
  const job = f.spawn(
    ['job', 'do', '--title', 'greet'],
    f.scenario('job', {
      implement: [{ actions: [write('hello.txt', 'hello\n')] }],
      review: [delay(600_000)],
    }),
  );
  await waitFor(() => jobIdFrom(job.stderr()) || null, 'the job to start', 60_000);
  const id = jobIdFrom(job.stderr());
  await waitFor(() => f.show(id).stage === 'reviewing' || null, 'the job to be reviewing', 60_000);
  const logs = f.spawn(['job', 'logs', id, '-f']);
  await waitFor(() => logs.stdout().length > 0 || null, 'the log printed', 30_000);
  const below = tree(logs.child.pid!).filter((p) => p !== logs.child.pid);
  logs.child.kill('SIGKILL');
  await logs.exit;
  await waitFor(
    () => {
      const left = below.filter(isRunning);
      if (left.length) throw new Error(`still running: ${JSON.stringify(left)}`);
      return true;
    },
    'nothing of ii job logs -f left running',
    15_000,
  );
  // The job goes on: it was only watched.
  expect(isRunning(job.child.pid!)).toBe(true);
  job.child.kill('SIGINT');
  await job.exit;
});
