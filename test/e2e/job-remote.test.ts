// Git across machines (issue 31), end to end with the built CLI and the
// scripted agent. "Machines" are separate clones of one bare repository (the
// shared remote, a file path). Machine A runs a job with [remote] push on;
// machine B, a fresh clone that never had A's commits, reads the job from
// the store and shows its diff (ii job diff, and the board's diff view)
// after fetching that job's refs. The CLI reads jobs by a slug of the
// clone's path (project identity by remote URL is another item of the
// issue), so B shares A's SQLite state dir and takes A's place: A's clone is
// moved aside and B is cloned where it was. Also: a push to an unreachable
// remote leaves the job completed (a warning); no [remote] push and no
// PostgreSQL pushes nothing; a landing whose lease on the remote's branch is
// lost changes nothing, here or there, and one whose local move is refused
// puts the remote back.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActions } from '../../src/dashboard/io/actions.js';
import { diffKey } from '../../src/dashboard/view/state.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { JobFixture, jobIdFrom, verdict, write } from '../helpers/job.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-remote-');
});
afterEach(() => f.cleanup());

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

const PUSH_ON = '\n[remote]\npush = true\n';

/** The bare repository every machine shares, made from the fixture's repo, which gets it as origin. */
function sharedRemote(): string {
  const bare = join(f.tmp.path, 'shared.git');
  git(f.tmp.path, 'clone', '-q', '--bare', f.repo, bare);
  f.git('remote', 'add', 'origin', bare);
  f.git('fetch', '-q', 'origin');
  return bare;
}

/** Two iterations (the review asks for more once), then the commit message. */
const TWO_ITERATIONS = {
  implement: [
    { actions: [write('hello.txt', 'hello\n')] },
    { actions: [write('hello.txt', 'hello, world\n')] },
  ],
  review: [verdict('REQUEST_CHANGES', 'Say whom to.'), verdict('ACCEPT', '')],
  'commit-message': [{ actions: [{ type: 'commit_message', text: 'Greet' }] }],
};

function runJob(scenario: unknown = TWO_ITERATIONS): string {
  const r = f.run(['job', 'do', '--title', 'greet'], f.scenario('job', scenario));
  expect(r.code, r.stderr).toBe(0);
  return jobIdFrom(r.stderr);
}

function events(id: string): { type: string; message?: string }[] {
  return readFileSync(join(f.tmp.path, 'state', 'incrementum', 'jobs', id, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; message?: string });
}

/** Machine B: A's clone moved aside, a fresh clone of the shared remote in its place, the same state dir. */
function becomeMachineB(bare: string, aside: string): void {
  renameSync(f.repo, aside);
  // --no-local: what a clone over the network gets (the remote's branches' objects), not a copy of its object store.
  git(f.tmp.path, 'clone', '-q', '--no-local', bare, f.repo);
}

describe('git across machines', () => {
  it("A pushes each iteration's refs and the final commit as they are made; B, lacking them, fetches that job's refs and shows its diff", async () => {
    f.setup(['test -f README.md'], { job: PUSH_ON });
    const bare = sharedRemote();
    const mainBefore = git(bare, 'rev-parse', 'main');
    const id = runJob();
    const job = f.show(id);
    expect(job.status).toBe('completed');
    const change = job.changes[0]!;
    const [first, last] = [change.commits[0]!.commit_id, change.commits.at(-1)!.commit_id];
    const onRemote = git(bare, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/incrementum/');
    // Both iterations, the base and the final (described) commit, under the change's own names.
    expect(onRemote).toContain(`refs/incrementum/changes/${change.change_id}/1 ${first}`);
    expect(onRemote).toContain(`refs/incrementum/changes/${change.change_id}/head ${last}`);
    expect(onRemote).toContain(`refs/incrementum/changes/${change.change_id}/2 `);
    // Never a user's branch, nor the workspace's.
    expect(git(bare, 'for-each-ref', '--format=%(refname)', 'refs/heads/')).toBe('refs/heads/main');
    expect(git(bare, 'rev-parse', 'main')).toBe(mainBefore);
    expect(events(id).filter((e) => e.type === 'warning')).toEqual([]);

    // The board on machine B: its diff view fetches the job's refs the same way.
    becomeMachineB(bare, join(f.tmp.path, 'machine-a'));
    expect(() => git(f.repo, 'cat-file', '-e', `${last}^{commit}`)).toThrow();
    const state = openStateStore({ dir: join(f.tmp.path, 'state', 'incrementum') });
    try {
      const dash = createDashboardStore({ repo: repoSlug(f.repo), repoLabel: f.repo });
      const actions = createActions({ state: asyncStore(state), dash, repoRoot: f.repo, quit: () => {} });
      await actions.loadDiff(id, 1, 2);
      const shown = dash.getState().diffs[diffKey(id, 1, 2)];
      expect(shown?.error ?? null).toBeNull();
      expect(shown?.loaded?.diff_error ?? null).toBeNull();
      expect(shown?.loaded?.diff).toContain('+hello, world');
    } finally {
      state.close();
    }
    git(f.repo, 'cat-file', '-e', `${last}^{commit}`);

    // ii job diff on another such machine.
    becomeMachineB(bare, join(f.tmp.path, 'machine-b0'));
    expect(() => git(f.repo, 'cat-file', '-e', `${last}^{commit}`)).toThrow();
    const d = f.run(['job', 'diff', id]);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stderr).toContain(`fetching job ${id}'s refs from the remote origin`);
    expect(d.stdout).toContain('+hello, world');
    // Only that job's refs came: nothing else of A's (its workspace branch) or the remote's.
    expect(
      git(f.repo, 'for-each-ref', '--format=%(refname)', 'refs/incrementum/').split('\n').sort(),
    ).toEqual(['1', '2', 'base', 'head'].map((l) => `refs/incrementum/changes/${change.change_id}/${l}`));
    // Now present: the next diff does not fetch.
    const again = f.run(['job', 'diff', id, '--iteration', '1']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('fetching');
    expect(again.stdout).toContain('+hello');

    // A third machine where the remote no longer has them: said clearly, nothing shown as a diff.
    git(bare, 'update-ref', '-d', `refs/incrementum/changes/${change.change_id}/1`);
    git(bare, 'update-ref', '-d', `refs/incrementum/changes/${change.change_id}/2`);
    git(bare, 'update-ref', '-d', `refs/incrementum/changes/${change.change_id}/head`);
    git(bare, 'update-ref', '-d', `refs/incrementum/changes/${change.change_id}/base`);
    becomeMachineB(bare, join(f.tmp.path, 'machine-b'));
    const gone = f.run(['job', 'diff', id]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain(`the remote origin does not have`);
    expect(gone.stderr).toContain(`ii job logs ${id}`);
  });

  it('a push to an unreachable remote does not fail the job: a warning each time, the job completes', () => {
    f.setup(['test -f README.md'], { job: PUSH_ON });
    f.git('remote', 'add', 'origin', join(f.tmp.path, 'no-such-remote.git'));
    const id = runJob();
    expect(f.show(id).status).toBe('completed');
    const warnings = events(id)
      .filter((e) => e.type === 'warning')
      .map((e) => e.message ?? '');
    expect(warnings.some((w) => w.startsWith("could not push the job's refs to the remote origin"))).toBe(
      true,
    );
    expect(warnings.some((w) => w.includes('no-such-remote.git'))).toBe(true);
    // The last word says where the commits are and how to push them.
    expect(warnings.at(-1)).toContain(
      "the job's commits are on this machine only: push them with git push origin",
    );
  });

  it('no [remote] push and no PostgreSQL: nothing is pushed (as before)', () => {
    f.setup(['test -f README.md']);
    const bare = sharedRemote();
    runJob();
    expect(git(bare, 'for-each-ref', 'refs/incrementum/')).toBe('');
  });

  it("a landing that loses its lease on the remote's branch (another machine pushed during its tests) fails clearly and changes nothing", () => {
    const armed = join(f.tmp.path, 'race-armed');
    const racer = join(f.tmp.path, 'racer');
    const script = join(f.tmp.path, 'test.sh');
    // Only in the landing's worktree, once it is armed: another machine pushes to the shared main.
    writeFileSync(
      script,
      `test -f README.md || exit 1\n` +
        `case "$PWD" in */landing/*) ;; *) exit 0 ;; esac\n` +
        `[ -f '${armed}' ] || exit 0\n` +
        `rm -f '${armed}'\n` +
        `git -C '${racer}' push -q origin HEAD:main\n`,
    );
    // Unsandboxed: the test command stands in for another machine.
    f.setup([`sh ${script}`], { job: `${PUSH_ON}\n[sandbox]\nmode = "off"\n` });
    const bare = sharedRemote();
    const id = runJob();
    git(f.tmp.path, 'clone', '-q', bare, racer);
    writeFileSync(join(racer, 'theirs.txt'), 'landed elsewhere\n');
    git(racer, 'add', 'theirs.txt');
    git(racer, '-c', 'user.name=r', '-c', 'user.email=r@x', 'commit', '-qm', 'another machine');
    const theirs = git(racer, 'rev-parse', 'HEAD');
    const mainHere = f.git('rev-parse', 'main').trim();
    writeFileSync(armed, '');

    const r = f.run(['job', 'land', id]);
    expect(r.code).not.toBe(0);
    expect(existsSync(armed)).toBe(false); // the race did happen, during the landing's tests
    expect(r.stderr).toMatch(/main on the remote origin moved while job \S+ was landing/);
    expect(r.stderr).toContain('Nothing was changed, on the remote or here');
    expect(r.stderr).toContain('git pull --ff-only origin main');
    // The other machine's push stands; this clone's main and checkout are as they were; the job is not landed.
    expect(git(bare, 'rev-parse', 'main')).toBe(theirs);
    expect(f.git('rev-parse', 'main').trim()).toBe(mainHere);
    expect(existsSync(join(f.repo, 'hello.txt'))).toBe(false);
    expect(f.git('status', '--porcelain').trim()).toBe('');
    expect((f.show(id) as unknown as { landed: unknown }).landed).toBeNull();

    // Brought up to date, the landing goes through, and the remote gets it by the same compare-and-swap.
    f.git('pull', '-q', '--ff-only', 'origin', 'main');
    const ok = f.run(['job', 'land', id]);
    expect(ok.code, ok.stderr).toBe(0);
    const landed = f.git('rev-parse', 'main').trim();
    expect(git(bare, 'rev-parse', 'main')).toBe(landed);
    expect(git(bare, 'rev-parse', `${landed}^`)).toBe(theirs);
    expect(
      events(id).some(
        (e) =>
          e.message?.startsWith('landed on main at ') && e.message.includes('(and on the remote origin)'),
      ),
    ).toBe(true);
  });

  it('a landing pushed to the remote whose move here is then refused (the checkout has an edit in a file the job changed) puts the remote back', () => {
    f.setup(['test -f README.md'], { job: PUSH_ON });
    const bare = sharedRemote();
    const id = runJob({
      implement: [{ actions: [write('README.md', '# from the job\n')] }],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Job work' }] }],
    });
    const main = f.git('rev-parse', 'main').trim();
    writeFileSync(join(f.repo, 'README.md'), '# my uncommitted edit\n');
    const r = f.run(['job', 'land', id]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/stash/);
    expect(r.stderr).not.toContain('could not be put back');
    expect(git(bare, 'rev-parse', 'main')).toBe(main);
    expect(f.git('rev-parse', 'main').trim()).toBe(main);
    expect(readFileSync(join(f.repo, 'README.md'), 'utf8')).toBe('# my uncommitted edit\n');
  });

  it("a landing is refused before it starts when the remote's branch has commits this clone has not", () => {
    f.setup(['test -f README.md'], { job: PUSH_ON });
    const bare = sharedRemote();
    const id = runJob();
    const other = join(f.tmp.path, 'other');
    git(f.tmp.path, 'clone', '-q', bare, other);
    writeFileSync(join(other, 'theirs.txt'), 'x\n');
    git(other, 'add', 'theirs.txt');
    git(other, '-c', 'user.name=r', '-c', 'user.email=r@x', 'commit', '-qm', 'another machine');
    git(other, 'push', '-q', 'origin', 'HEAD:main');
    const theirs = git(other, 'rev-parse', 'HEAD');
    const main = f.git('rev-parse', 'main').trim();
    const r = f.run(['job', 'land', id]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`main on the remote origin is at ${theirs.slice(0, 10)}, which main here`);
    expect(r.stderr).toContain('Nothing was changed');
    expect(git(bare, 'rev-parse', 'main')).toBe(theirs);
    expect(f.git('rev-parse', 'main').trim()).toBe(main);
  });

  /** A hook in the shared remote that holds every push past the remote's timeout (the push is then ended). */
  function slowHook(bare: string, hook: 'pre-receive' | 'post-receive'): void {
    const path = join(bare, 'hooks', hook);
    writeFileSync(path, '#!/bin/sh\ncat >/dev/null\nsleep 30\n');
    chmodSync(path, 0o755);
  }
  const SLOW = '\n[remote]\npush = true\ntimeout-seconds = 3\n';

  it("a landing push that times out after the remote took it (its post-receive hook is slow) is a landing: the remote's branch moved, so this one moves too", () => {
    f.setup(['test -f README.md'], { job: SLOW });
    const bare = sharedRemote();
    const id = runJob();
    // Only now: the job's ref pushes are not held.
    slowHook(bare, 'post-receive');
    const r = f.run(['job', 'land', id, '--no-test']);
    expect(r.code, r.stderr).toBe(0);
    const landed = f.git('rev-parse', 'main').trim();
    expect(git(bare, 'rev-parse', 'main')).toBe(landed);
    expect(existsSync(join(f.repo, 'hello.txt'))).toBe(true);
    expect((f.show(id) as unknown as { landed: { commit: string } | null }).landed?.commit).toBe(landed);
  });

  it('a landing push that times out before the remote took it (its pre-receive hook is slow) says nothing was changed only once the remote is seen unmoved', () => {
    f.setup(['test -f README.md'], { job: SLOW });
    const bare = sharedRemote();
    const id = runJob();
    const main = f.git('rev-parse', 'main').trim();
    slowHook(bare, 'pre-receive');
    const r = f.run(['job', 'land', id, '--no-test']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('pushing main to the remote origin failed');
    expect(r.stderr).toContain(`The remote's main is still at ${main.slice(0, 10)}, so nothing was changed`);
    expect(git(bare, 'rev-parse', 'main')).toBe(main);
    expect(f.git('rev-parse', 'main').trim()).toBe(main);
    expect((f.show(id) as unknown as { landed: unknown }).landed).toBeNull();
  });

  it('[remote] push = true in a repository with no such remote is refused before a job starts', () => {
    f.setup(['test -f README.md'], { job: PUSH_ON });
    const r = f.run(['job', 'do', '--title', 'greet'], f.scenario('job', TWO_ITERATIONS));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('[remote] push = true, but this repository has no remote named origin');
    expect(r.stderr).toContain('git remote add origin');
  });

  it('ii job land --continue after a git pull (another machine landed while the conflict waited) lands on the pulled branch and pushes it', () => {
    f.setup(['test -f README.md'], { job: `${PUSH_ON}\n[land]\non-conflict = "stop"\n` });
    const bare = sharedRemote();
    const id = runJob({
      implement: [{ actions: [write('README.md', '# from the job\n')] }],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'Job work' }] }],
    });
    writeFileSync(join(f.repo, 'README.md'), '# from main\n');
    f.git('-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-qam', 'main edits the same line');
    f.git('push', '-q', 'origin', 'main');
    const stopped = f.run(['job', 'land', id]);
    expect(stopped.code).toBe(2);
    expect(stopped.stderr).toContain('stopped in a conflict');
    const ws = (f.show(id) as unknown as { land_conflict: { worktree: string } }).land_conflict.worktree;

    // Meanwhile another machine lands on the shared main, and this one pulls it.
    const other = join(f.tmp.path, 'other');
    git(f.tmp.path, 'clone', '-q', bare, other);
    writeFileSync(join(other, 'theirs.txt'), 'landed elsewhere\n');
    git(other, 'add', 'theirs.txt');
    git(other, '-c', 'user.name=r', '-c', 'user.email=r@x', 'commit', '-qm', 'another machine');
    git(other, 'push', '-q', 'origin', 'HEAD:main');
    const theirs = git(other, 'rev-parse', 'HEAD');
    f.git('pull', '-q', '--ff-only', 'origin', 'main');

    writeFileSync(join(ws, 'README.md'), '# from main and the job\n');
    f.git('-C', ws, 'add', 'README.md');
    const done = f.run(['job', 'land', id, '--continue']);
    expect(done.code, done.stderr).toBe(0);
    const landed = f.git('rev-parse', 'main').trim();
    expect(git(bare, 'rev-parse', 'main')).toBe(landed);
    expect(git(bare, 'rev-parse', `${landed}^`)).toBe(theirs);
    expect(readFileSync(join(f.repo, 'README.md'), 'utf8')).toBe('# from main and the job\n');
    expect(readFileSync(join(f.repo, 'theirs.txt'), 'utf8')).toBe('landed elsewhere\n');
    expect((f.show(id) as unknown as { landed: { commit: string } | null }).landed?.commit).toBe(landed);
  });
});
