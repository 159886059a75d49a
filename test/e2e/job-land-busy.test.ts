// `ii job land` onto a branch git is in the middle of something on: a real
// interactive rebase stopped at `edit` (scripted with GIT_SEQUENCE_EDITOR), a
// bisect, a `git am` and a merge stopped on a conflict, in the main checkout
// or a linked worktree. Each is refused with what to finish first, nothing
// moves, and once it is finished the landing goes through.
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, write } from '../helpers/job.js';

let f: JobFixture;
beforeEach(() => {
  f = new JobFixture('ii-land-busy-');
  f.setup();
});
afterEach(() => f.cleanup());

interface Rec {
  status: string;
  landed: { onto: string; commit: string } | null;
}

function runJob(): string {
  const s = f.scenario('job', {
    implement: [{ actions: [write('hello.txt', 'hi\n')] }],
    'commit-message': [{ actions: [{ type: 'commit_message', text: 'Job work' }] }],
  });
  const r = f.run(['job', 'do', '--title', 'work'], s);
  expect(r.code, r.stderr).toBe(0);
  return jobIdFrom(r.stderr);
}

/** git in `cwd`, whatever its exit (a stopped rebase, am or merge exits non-zero). */
const gitIn = (cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } });

const commitIn = (cwd: string, file: string, body: string, msg: string) => {
  writeFileSync(join(cwd, file), body);
  execFileSync('git', ['add', file], { cwd });
  execFileSync('git', ['commit', '-qm', msg], { cwd });
};

/** `git rebase -i HEAD~1` stopped at `edit` on its one commit. */
function rebaseStoppedAtEdit(cwd: string): void {
  const r = gitIn(cwd, ['rebase', '-i', 'HEAD~1'], { GIT_SEQUENCE_EDITOR: "sed -i -e 's/^pick/edit/'" });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr + r.stdout).toMatch(/Stopped at/);
}

/** `ii job land` refused: nothing moved, the job not landed, the message as matched. */
function refused(id: string, tip: string, ...says: (string | RegExp)[]): string {
  const r = f.run(['job', 'land', id]);
  expect(r.code, r.stderr).toBe(2);
  for (const s of says) expect(r.stderr).toMatch(s);
  expect(f.git('rev-parse', 'refs/heads/main').trim()).toBe(tip);
  expect((f.show(id) as unknown as Rec).landed).toBeNull();
  return r.stderr;
}

function landed(id: string): string {
  const r = f.run(['job', 'land', id]);
  expect(r.code, r.stderr).toBe(0);
  const sha = r.stdout.trim();
  expect(f.git('rev-parse', 'refs/heads/main').trim()).toBe(sha);
  expect((f.show(id) as unknown as Rec).landed).toMatchObject({ onto: 'main', commit: sha });
  return sha;
}

describe('ii job land onto a busy branch', () => {
  it('refuses while an interactive rebase of main is stopped at edit; lands once the rebase is finished', () => {
    const id = runJob();
    commitIn(f.repo, 'other.txt', 'other\n', 'someone else');
    rebaseStoppedAtEdit(f.repo);
    const tip = f.git('rev-parse', 'refs/heads/main').trim();
    refused(
      id,
      tip,
      `main is in the middle of a rebase in ${f.repo}, so nothing was changed`,
      'finish the rebase there (git rebase --continue) or abort it (git rebase --abort)',
      `then run ii job land ${id} again`,
    );
    // The person's rebase goes on as if the landing had never been tried.
    const cont = gitIn(f.repo, ['rebase', '--continue'], { GIT_EDITOR: 'true' });
    expect(cont.status, cont.stderr).toBe(0);
    expect(f.git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    const rebased = f.git('rev-parse', 'main').trim();
    const sha = landed(id);
    expect(f.git('rev-parse', `${sha}^`).trim()).toBe(rebased);
    expect(f.git('log', '-1', '--format=%s', sha).trim()).toBe('Job work');
  });

  it('refuses during a bisect, a git am and a merge, each saying what finishes it, then lands', () => {
    const id = runJob();
    commitIn(f.repo, 'b1.txt', '1\n', 'one');
    commitIn(f.repo, 'b2.txt', '2\n', 'two');
    const tip = f.git('rev-parse', 'main').trim();

    // A bisect detaches HEAD: main is not checked out, but moving it would
    // be lost from where git bisect reset returns.
    expect(gitIn(f.repo, ['bisect', 'start', 'HEAD', 'HEAD~2']).status).toBe(0);
    expect(gitIn(f.repo, ['symbolic-ref', '-q', 'HEAD']).status).not.toBe(0);
    refused(
      id,
      tip,
      `main is in the middle of a bisect in ${f.repo}`,
      'end the bisect there (git bisect reset)',
    );
    expect(gitIn(f.repo, ['bisect', 'reset']).status).toBe(0);

    // A patch of README.md from a side branch that no longer applies on main.
    f.git('checkout', '-q', '-b', 'side', 'main~2');
    commitIn(f.repo, 'README.md', '# side\n', 'side readme');
    const patch = join(f.tmp.path, 'side.patch');
    writeFileSync(patch, f.git('format-patch', '-1', '--stdout'));
    f.git('checkout', '-q', 'main');
    commitIn(f.repo, 'README.md', '# main\n', 'main readme');
    const tip2 = f.git('rev-parse', 'main').trim();
    expect(gitIn(f.repo, ['am', patch]).status).not.toBe(0);
    refused(
      id,
      tip2,
      `main is in the middle of a git am in ${f.repo}`,
      'finish the git am there (git am --continue) or abort it (git am --abort)',
    );
    expect(gitIn(f.repo, ['am', '--abort']).status).toBe(0);

    // A merge stopped on a conflict: not "commit or stash".
    expect(gitIn(f.repo, ['merge', 'side']).status).not.toBe(0);
    const said = refused(
      id,
      tip2,
      `main is in the middle of a merge in ${f.repo}`,
      'finish the merge there (resolve, then git commit) or abort it (git merge --abort)',
    );
    expect(said).not.toMatch(/stash/);
    expect(gitIn(f.repo, ['merge', '--abort']).status).toBe(0);

    // Nothing in progress: the normal landing.
    const sha = landed(id);
    expect(f.git('rev-parse', `${sha}^`).trim()).toBe(tip2);
  });

  it('counts a linked worktree: a rebase of main stopped there refuses the landing, which goes through once it is aborted', () => {
    const id = runJob();
    f.git('checkout', '-q', '-b', 'elsewhere');
    const wt = join(f.tmp.path, 'linked');
    f.git('worktree', 'add', '-q', wt, 'main');
    commitIn(wt, 'other.txt', 'other\n', 'in the linked worktree');
    const tip = f.git('rev-parse', 'main').trim();
    rebaseStoppedAtEdit(wt);
    refused(
      id,
      tip,
      `main is in the middle of a rebase in ${wt}, so nothing was changed`,
      'git rebase --abort',
    );
    // The rebase, aborted, puts main back where it was: still the tip.
    expect(gitIn(wt, ['rebase', '--abort']).status).toBe(0);
    expect(f.git('rev-parse', 'main').trim()).toBe(tip);
    const sha = landed(id);
    expect(f.git('rev-parse', `${sha}^`).trim()).toBe(tip);
    // main is checked out in the linked worktree: its files were fast-forwarded.
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: wt, encoding: 'utf8' })).toBe('');
    expect(execFileSync('git', ['ls-files', 'hello.txt'], { cwd: wt, encoding: 'utf8' }).trim()).toBe(
      'hello.txt',
    );
  });

  it('refuses a rebase begun while the landing tested: checked again just before the move', () => {
    const flag = join(f.tmp.path, 'rebased-once');
    const script = join(f.tmp.path, 'test.sh');
    // Only in the landing's worktree, once: the person starts a rebase of main.
    writeFileSync(
      script,
      `case "$PWD" in */landing/*) ;; *) exit 0 ;; esac\n` +
        `[ -f '${flag}' ] && exit 0\n` +
        `touch '${flag}'\n` +
        `cd '${join(f.tmp.path, 'repo')}' || exit 1\n` +
        `GIT_SEQUENCE_EDITOR="sed -i -e 's/^pick/edit/'" git rebase -i HEAD~1 >/dev/null 2>&1\n` +
        `exit 0\n`,
    );
    // Unsandboxed: the test command stands in for the person rebasing in their checkout.
    f.setup([`sh ${script}`], { job: '\n[sandbox]\nmode = "off"\n' });
    const id = runJob();
    commitIn(f.repo, 'other.txt', 'other\n', 'someone else');
    const tip = f.git('rev-parse', 'main').trim();
    refused(id, tip, `main is in the middle of a rebase in ${f.repo}`, 'git rebase --continue');
    expect(gitIn(f.repo, ['rebase', '--abort']).status).toBe(0);
    expect(f.git('rev-parse', 'main').trim()).toBe(tip);
    const sha = landed(id);
    expect(f.git('rev-parse', `${sha}^`).trim()).toBe(tip);
  });
});
