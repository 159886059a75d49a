// `ii job land` end to end: a real job run by the scripted agent, then landed
// onto a real branch that moved, with the user's checkout dirty or not, and a
// branch that moves during the landing's own test run.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, promptsSent, write } from '../helpers/job.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-land-');
});
afterEach(() => f.cleanup());

interface Landed {
  landed: { onto: string; commit: string; at: string; tested: boolean } | null;
  base_branch: string | null;
  workspace_path: string | null;
  changes: { change_id: string }[];
}

/** Runs a job that writes `files` and returns its id. */
function runJob(files: Record<string, string>): string {
  const s = f.scenario('job', {
    implement: [{ actions: Object.entries(files).map(([p, c]) => write(p, c)) }],
    'commit-message': [{ actions: [{ type: 'commit_message', text: 'Job work' }] }],
  });
  const r = f.run(['job', 'do', '--title', 'work'], s);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toContain('ii job land');
  return jobIdFrom(r.stderr);
}

/** Every file of the checkout but .git, with a hash of its bytes. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (d === dir && name === '.git') continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

const commitUser = (file: string, body: string, msg: string) => {
  writeFileSync(join(f.repo, file), body);
  f.git('add', file);
  f.git('commit', '-qm', msg);
};

describe('ii job land', () => {
  it('rebases onto a trunk that moved, tests the rebased tip, keeps Change-Ids, fast-forwards the checkout around dirty files', () => {
    const heads = join(f.tmp.path, 'heads.txt');
    // (the sandbox lets the tests write their log outside the workspace because it says so)
    f.setup(['test -f README.md', `git rev-parse HEAD >> ${heads}`], {
      job: `\n[sandbox]\nwritable = ["${f.tmp.path}"]\n`,
    });
    commitUser('notes.md', 'notes\n', 'notes');
    const id = runJob({ 'hello.txt': 'hi\n' });
    const before = f.show(id) as unknown as Landed;
    expect(before.base_branch).toBe('main');
    const wsPath = before.workspace_path!;
    expect(existsSync(wsPath)).toBe(true);

    // The trunk moves in another file; the user has work in progress elsewhere.
    commitUser('other.txt', 'other\n', 'someone else');
    const trunkBefore = f.git('rev-parse', 'main').trim();
    writeFileSync(join(f.repo, 'notes.md'), 'my unsaved edit\n');
    writeFileSync(join(f.repo, 'scratch.txt'), 'untracked\n');
    const dirty = snapshot(f.repo);

    const r = f.run(['job', 'land', id.slice(0, 6)]);
    expect(r.code, r.stderr).toBe(0);
    const landedSha = r.stdout.trim();
    expect(f.git('rev-parse', 'main').trim()).toBe(landedSha);
    // Linear: the job's commit sits on the moved trunk, no merge commit.
    expect(f.git('rev-parse', `${landedSha}^`).trim()).toBe(trunkBefore);
    expect(f.git('rev-list', '--merges', 'main').trim()).toBe('');
    const job = f.show(id) as unknown as Landed;
    expect(f.git('log', '-1', '--format=%B', landedSha)).toContain(`Change-Id: ${job.changes[0]!.change_id}`);
    expect(f.git('log', '-1', '--format=%B', landedSha)).toContain('Job work');
    // The tests ran on the rebased tip itself.
    expect(readFileSync(heads, 'utf8').split('\n')).toContain(landedSha);
    expect(job.landed).toMatchObject({ onto: 'main', commit: landedSha, tested: true });
    // The checkout got the job's file; the user's edits are byte for byte as they were.
    expect(readFileSync(join(f.repo, 'hello.txt'), 'utf8')).toBe('hi\n');
    const after = snapshot(f.repo);
    for (const [p, h] of Object.entries(dirty)) expect(after[p], p).toBe(h);
    expect(f.git('status', '--porcelain').replace(/\n$/, '').split('\n').sort()).toEqual([
      ' M notes.md',
      '?? scratch.txt',
    ]);
    // The job's workspace and branch are gone; its iteration refs stay.
    expect(existsSync(wsPath)).toBe(false);
    expect(f.git('branch', '--list', 'incrementum/*').trim()).toBe('');
    // Not "yet": there was one, and the list says where it went.
    expect(f.run(['workspace', 'list']).stdout).toBe(
      'No workspaces now: the one jobs used here was removed as its job landed. ii job do makes a new one.\n',
    );
    expect(f.git('for-each-ref', `refs/incrementum/changes/${job.changes[0]!.change_id}/`).trim()).not.toBe(
      '',
    );
    // Shown, and landing twice is refused.
    expect(f.run(['job', 'show', id]).stdout).toMatch(/landed.*main/i);
    expect(f.run(['job', 'list', '--all']).stdout).toContain('LANDED');
    const journal = JSON.parse(f.run(['job', 'journal', id, '--json']).stdout) as {
      status: { landed: unknown };
    };
    expect(journal.status.landed).toMatchObject({ onto: 'main', commit: landedSha });
    const again = f.run(['job', 'land', id]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('already landed');
  });

  it('refuses when the checkout has uncommitted edits in a file the job changed: every byte unchanged, branch not moved', () => {
    f.setup();
    const id = runJob({ 'README.md': '# from the job\n', 'new.txt': 'new\n' });
    commitUser('other.txt', 'other\n', 'someone else');
    const trunk = f.git('rev-parse', 'main').trim();
    writeFileSync(join(f.repo, 'README.md'), '# my uncommitted edit\n');
    writeFileSync(join(f.repo, 'scratch.txt'), 'untracked\n');
    const before = snapshot(f.repo);

    const r = f.run(['job', 'land', id]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('README.md');
    expect(r.stderr).toMatch(/stash/);
    expect(snapshot(f.repo)).toEqual(before);
    expect(f.git('rev-parse', 'main').trim()).toBe(trunk);
    expect((f.show(id) as unknown as Landed).landed).toBeNull();
    // job show says why and what to do, not a first line ending in a colon.
    const shown = f.run(['job', 'show', id]).stdout;
    // git's refusal keeps its lines, each under the first, not one run-on line.
    const landed = shown.slice(shown.indexOf('  landed:'), shown.indexOf('  usage:')).split('\n');
    expect(landed[0]).toMatch(/^ {2}landed: +no: main is checked out in .*, so nothing was changed:$/);
    expect(landed).toContain('               \tREADME.md');
    expect(landed).toContain('               Please commit your changes or stash them before you merge.');
    expect(landed).toContain(
      `             Commit or stash those changes (git stash), then run ii job land ${id} again.`,
    );
    expect(landed.at(-2)).toMatch(new RegExp(`^ {13}refused \\S+; ii job land ${id} tries again$`));
  });

  it('never overwrites a commit made to the branch during the test run: rebases and tests again', () => {
    const flag = join(f.tmp.path, 'committed-once');
    const script = join(f.tmp.path, 'test.sh');
    // Only in the landing's worktree, once: commit to `trunk` as another process would.
    writeFileSync(
      script,
      `case "$PWD" in */landing/*) ;; *) exit 0 ;; esac\n` +
        `[ -f '${flag}' ] && exit 0\n` +
        `touch '${flag}'\n` +
        `cd '${join(f.tmp.path, 'repo')}' || exit 1\n` +
        `c=$(git commit-tree -p refs/heads/trunk -m concurrent 'refs/heads/trunk^{tree}') && git update-ref refs/heads/trunk "$c"\n`,
    );
    // Unsandboxed: the test command stands in for another process committing to the user's repository.
    f.setup([`sh ${script}`], { job: '\n[sandbox]\nmode = "off"\n' });
    f.git('branch', 'trunk');
    const id = runJob({ 'hello.txt': 'hi\n' });

    const r = f.run(['job', 'land', id, '--onto', 'trunk', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('moved meanwhile');
    const job = JSON.parse(r.stdout) as Landed;
    expect(job.landed?.onto).toBe('trunk');
    const tip = f.git('rev-parse', 'trunk').trim();
    expect(job.landed?.commit).toBe(tip);
    // The concurrent commit is the landed commit's parent: kept, not overwritten.
    expect(f.git('log', '-1', '--format=%s', `${tip}^`).trim()).toBe('concurrent');
    expect(f.git('log', '--format=%s', 'trunk').split('\n')[0]).toBe('Job work');
    // main (checked out, not the target) did not move.
    expect(f.git('log', '-1', '--format=%s', 'main').trim()).toBe('initial');
  });

  it('a trunk that changed the same lines: the job goes on with a change the agent resolves, tested and reviewed, then lands', () => {
    const heads = join(f.tmp.path, 'tested');
    f.setup([`git rev-parse HEAD >> ${heads}`, 'test -f README.md'], {
      job: `\n[sandbox]\nwritable = ["${f.tmp.path}"]\n`,
    });
    const s = f.scenario('conflict', {
      implement: [{ actions: [write('README.md', '# from the job\n'), write('job.txt', 'job\n')] }],
      'commit-message': [
        { actions: [{ type: 'commit_message', text: 'Job work' }] },
        { actions: [{ type: 'commit_message', text: 'fix: resolve conflicts with main' }] },
      ],
      'resolve-conflicts': [{ actions: [write('README.md', '# from main and the job\n')] }],
    });
    const r0 = f.run(['job', 'do', '--title', 'work'], s);
    expect(r0.code, r0.stderr).toBe(0);
    const id = jobIdFrom(r0.stderr);
    const first = f.show(id) as unknown as Landed;
    const changeId = first.changes[0]!.change_id;
    commitUser('README.md', '# from main\n', 'main edits the same line');
    const trunk = f.git('rev-parse', 'main').trim();
    writeFileSync(join(f.repo, 'scratch.txt'), 'untracked\n');

    const r = f.run(['job', 'land', id], s);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('the agent resolves them in a new change');
    const job = f.show(id) as unknown as Landed & {
      status: string;
      changes: {
        change_id: string;
        commits: { review: { outcome: string } | null; tests_passed: boolean | null }[];
      }[];
      agent_sessions: { purpose: string; transcript: string }[];
    };
    expect(job.status).toBe('completed');
    // A second change, tested and accepted like any other: made in the change
    // the job's last pass had left with no commit; the resolver's own last
    // pass leaves another.
    expect(job.changes).toHaveLength(3);
    expect(job.changes[2]!.commits).toEqual([]);
    const resolution = job.changes[1]!;
    expect(resolution.commits.at(-1)!.tests_passed).toBe(true);
    expect(resolution.commits.at(-1)!.review?.outcome).toBe('ACCEPT');
    // The agent was shown the file and both sides.
    const prompts = job.agent_sessions.flatMap((a) => promptsSent(a.transcript));
    const resolve = prompts.find((p) => p.startsWith('You are resolving conflicts'));
    expect(resolve).toBeDefined();
    expect(resolve).toContain('## README.md');
    expect(resolve).toContain('+# from main');
    expect(resolve).toContain('+# from the job');
    // Landed: linear on the moved trunk, the job's Change-Id and the
    // resolution's both in the history, the tip tested.
    const landed = job.landed!;
    expect(landed.tested).toBe(true);
    expect(f.git('rev-parse', 'main').trim()).toBe(landed.commit);
    expect(f.git('rev-list', '--merges', 'main').trim()).toBe('');
    const log = f.git('log', '--format=%B', `${trunk}..main`);
    expect(log).toContain(`Change-Id: ${changeId}`);
    expect(log).toContain(`Change-Id: ${resolution.change_id}`);
    expect(f.git('rev-list', '--count', `${trunk}..main`).trim()).toBe('2');
    expect(readFileSync(heads, 'utf8').split('\n')).toContain(landed.commit);
    expect(readFileSync(join(f.repo, 'README.md'), 'utf8')).toBe('# from main and the job\n');
    expect(readFileSync(join(f.repo, 'job.txt'), 'utf8')).toBe('job\n');
    expect(readFileSync(join(f.repo, 'scratch.txt'), 'utf8')).toBe('untracked\n');
  });

  it('on-conflict = "stop": a conflict waits rebase-in-progress, the checkout untouched; --abort restores the job, --continue lands the resolution', () => {
    f.setup(['test -f README.md'], { job: '\n[land]\non-conflict = "stop"\n' });
    const id = runJob({ 'README.md': '# from the job\n' });
    const changeId = (f.show(id) as unknown as Landed).changes[0]!.change_id;
    commitUser('README.md', '# from main\n', 'main edits the same line');
    const trunk = f.git('rev-parse', 'main').trim();
    writeFileSync(join(f.repo, 'scratch.txt'), 'untracked\n');
    const before = snapshot(f.repo);

    const stopped = f.run(['job', 'land', id]);
    expect(stopped.code).toBe(2);
    expect(stopped.stderr).toContain('stopped in a conflict');
    expect(stopped.stderr).toContain('  README.md');
    expect(stopped.stderr).toContain(`ii job land ${id} --continue`);
    expect(snapshot(f.repo)).toEqual(before);
    expect(f.git('rev-parse', 'main').trim()).toBe(trunk);
    const held = f.show(id) as unknown as Landed & {
      status: string;
      land_conflict: { onto: string; files: string[]; worktree: string } | null;
    };
    expect(held.status).toBe('completed');
    expect(held.landed).toBeNull();
    expect(held.land_conflict?.files).toEqual(['README.md']);
    const ws = held.land_conflict!.worktree;
    expect(readFileSync(join(ws, 'README.md'), 'utf8')).toContain('<<<<<<<');
    expect(f.run(['job', 'show', id]).stdout).toContain('stopped in a conflict on main');
    expect(f.run(['job', 'list', '--all']).stdout).toContain('conflict');
    // A plain land now says what is going on instead of starting over.
    expect(f.run(['job', 'land', id]).stderr).toContain('--continue');
    // --continue before the files are resolved stops again, naming them.
    const early = f.run(['job', 'land', id, '--continue']);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain('still unresolved');

    const aborted = f.run(['job', 'land', id, '--abort']);
    expect(aborted.code, aborted.stderr).toBe(0);
    expect(existsSync(ws)).toBe(false);
    expect((f.show(id) as unknown as { land_conflict: unknown }).land_conflict).toBeNull();
    expect(snapshot(f.repo)).toEqual(before);
    expect(f.git('rev-parse', 'main').trim()).toBe(trunk);

    // Again, and this time a person resolves it in the worktree.
    expect(f.run(['job', 'land', id]).code).toBe(2);
    writeFileSync(join(ws, 'README.md'), '# from main and the job\n');
    f.git('-C', ws, 'add', 'README.md');
    const done = f.run(['job', 'land', id, '--continue']);
    expect(done.code, done.stderr).toBe(0);
    const landed = (f.show(id) as unknown as Landed).landed!;
    expect(landed.tested).toBe(true);
    expect(f.git('rev-parse', 'main').trim()).toBe(landed.commit);
    expect(f.git('rev-parse', `${landed.commit}^`).trim()).toBe(trunk);
    expect(f.git('log', '-1', '--format=%B', landed.commit)).toContain(`Change-Id: ${changeId}`);
    expect(readFileSync(join(f.repo, 'README.md'), 'utf8')).toBe('# from main and the job\n');
    expect(existsSync(ws)).toBe(false);
  });

  it('--no-test lands without running the tests and records it; red tests land nothing', () => {
    const gate = join(f.tmp.path, 'red');
    f.setup([`test ! -f ${gate}`]);
    const id = runJob({ 'hello.txt': 'hi\n' });
    commitUser('other.txt', 'other\n', 'someone else');
    const trunk = f.git('rev-parse', 'main').trim();
    writeFileSync(gate, '');
    const red = f.run(['job', 'land', id]);
    expect(red.code).not.toBe(0);
    expect(red.stderr).toContain('the tests fail');
    expect(red.stderr).toContain(`test ! -f ${gate}`);
    expect(f.git('rev-parse', 'main').trim()).toBe(trunk);
    expect(existsSync(join(f.repo, 'hello.txt'))).toBe(false);

    const r = f.run(['job', 'land', id, '--no-test']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('not tested');
    expect((f.show(id) as unknown as Landed).landed?.tested).toBe(false);
  });
});
