// A revision read from the store is never an option to git. In a shared
// store another machine writes a job's record: a commit recorded as
// "--output=<file>" made `git diff` (ii job diff, the board's diff view) and
// `git log` write their output over that file, on every machine that looked.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { loadIterationDiff, locateIteration } from '../../src/history/iteration-diff.js';
import { openStateStore } from '../../src/state/index.js';
import { GitVcs } from '../../src/vcs/git.js';
import { commitSubjects, commitsBetween, fileDiff, isAncestor } from '../../src/vcs/git-landing.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
let head: string;
/** A file of the user's that an option in a revision would write over. */
let victim: string;
beforeEach(() => {
  tmp = tempDir();
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, { 'a.txt': 'one\n' });
  head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
  victim = join(tmp.path, 'victim.txt');
  writeFileSync(victim, 'the user’s own file\n');
});
afterEach(() => tmp.cleanup());

const intact = () => expect(readFileSync(victim, 'utf8')).toBe('the user’s own file\n');

describe('a revision that git would read as an option', () => {
  it('is refused by every diff, log and landing step that takes one from a record; the file is untouched', async () => {
    const vcs = new GitVcs({ checkLinks: false });
    const bad = `--output=${victim}`;
    const fresh = join(tmp.path, 'made-by-git.txt');
    const calls: [string, () => Promise<unknown>][] = [
      ['changedFiles from', () => vcs.changedFiles(repo, bad, head)],
      ['changedFiles to', () => vcs.changedFiles(repo, head, bad)],
      ['diff', () => vcs.diff(repo, bad, head)],
      ['log', () => vcs.log(repo, bad, head)],
      ['commitsBetween', () => commitsBetween(repo, bad, head)],
      ['commitSubjects', () => commitSubjects(repo, bad, head)],
      ['fileDiff', () => fileDiff(repo, bad, head, 'a.txt', 10)],
      ['isAncestor', () => isAncestor(repo, `--output=${fresh}`, head)],
    ];
    for (const [name, call] of calls) {
      await expect(call(), name).rejects.toThrow(/not a revision/);
      // Said as what it is (no internal error and stack), with where it came from.
      await expect(call(), name).rejects.toBeInstanceOf(UserError);
      intact();
    }
    expect(existsSync(fresh)).toBe(false);
  });

  it("ii job diff's loader, on a job whose record names such a commit: a diff error, nothing written", async () => {
    const store = openStateStore({ dir: join(tmp.path, 'state') });
    try {
      const todo = store.todos.create('r', { title: 't' });
      const job = store.jobs.claim('r', { todo_id: todo.id, pid: 1, host: 'elsewhere' }, () => null);
      store.jobs.appendChange(job.id, `I${'a'.repeat(40)}`);
      store.jobs.appendCommit(job.id, { commit_id: head, draft_message: 'one' });
      store.jobs.appendCommit(job.id, { commit_id: `--output=${victim}`, draft_message: 'two' });
      const rec = store.jobs.get(job.id)!;
      const d = await loadIterationDiff(new GitVcs({ checkLinks: false }), rec, locateIteration(rec), [repo]);
      intact();
      expect(d.diff_error).toMatch(/not a revision/);
    } finally {
      store.close();
    }
  });
});
