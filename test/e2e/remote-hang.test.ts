// A remote that hangs, and ii stopped while git talks to it. git's push,
// fetch and ls-remote run in a session of their own (a timeout ends git with
// its helpers), out of reach of the terminal's Ctrl-C: ii must end them
// itself. The "remote" is a bare repository whose upload-pack or
// receive-pack (remote.origin.uploadpack / receivepack, run by git through
// the shell for a local path) is a script that sleeps: local, no network.
// What is left is looked for in /proc by the test's temp dir (in a process's
// command line or working directory).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, delay, jobIdFrom, verdict, write } from '../helpers/job.js';
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
function leftBehind(): { pid: number; cmd: string }[] {
  const dir = f.tmp.path;
  const out: { pid: number; cmd: string }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!)) continue;
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${d}/cwd`);
      } catch {}
      if (cmd.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`)) out.push({ pid: Number(d), cmd });
    } catch {} // gone meanwhile
  }
  return out;
}

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

describe('a remote that hangs', () => {
  it('Ctrl-C of ii job diff during its fetch ends git and the remote side with it: nothing is left running', async () => {
    f.setup(['test -f README.md'], { job: PUSH_ON });
    const bare = sharedRemote();
    const r = f.run(
      ['job', 'do', '--title', 'greet'],
      f.scenario('job', {
        implement: [{ actions: [write('hello.txt', 'hello\n')] }],
        review: [verdict('ACCEPT', '')],
        'commit-message': [{ actions: [{ type: 'commit_message', text: 'Greet' }] }],
      }),
    );
    expect(r.code, r.stderr).toBe(0);
    const id = jobIdFrom(r.stderr);
    // Another machine: a fresh clone lacking the job's commits, whose remote then hangs on a fetch.
    renameSync(f.repo, join(f.tmp.path, 'machine-a'));
    git(f.tmp.path, 'clone', '-q', '--no-local', bare, f.repo);
    f.git('config', 'remote.origin.uploadpack', hangScript());

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
    job.child.kill('SIGKILL');
    await job.exit;
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
