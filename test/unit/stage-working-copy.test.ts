// stageWorkingCopy answers hasChanges from the staging commitIteration does
// anyway (add, write-tree, then the tree against HEAD's), and the
// commitIteration handed its answer records that tree without staging again.
// Whatever the agent did, through the tracker or its own shell, must be seen:
// each case is checked against git status (hasChanges) and against what is
// left uncommitted after the iteration.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const vcs = new GitVcs();
afterAll(() => vcs.close());
let tmp: ReturnType<typeof tempDir>;
let repo: string;
beforeEach(() => {
  tmp = tempDir();
  repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo, {
    'README.md': '# test\n',
    'a.txt': 'one\n',
    'gone.txt': 'bye\n',
    'run.sh': 'echo hi\n',
    '.gitignore': 'build/\n*.log\n',
  });
});
afterEach(() => tmp.cleanup());

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let n = 0;
/** A workspace on its own branch at the repo's base, with a change started. */
async function workspace(): Promise<string> {
  const base = (await vcs.resolveBase(repo)).sha;
  const ws = join(tmp.path, 'ws', String(++n));
  await vcs.addWorkspace(repo, ws, `incrementum/ws-${n}`, base);
  await vcs.startChange(ws);
  return ws;
}

/** What git would still commit, protocol files aside (empty once an iteration recorded everything). */
const left = (ws: string) =>
  git(ws, 'status', '--porcelain=v1', '-z', '--untracked-files=all')
    .split('\0')
    .filter((e) => e && !e.includes('.incrementum-'));

/** What the agent did, as a shell would do it: none of it through the tracker. */
const CHANGES: [string, (ws: string) => void, { path: string; status: string }[]][] = [
  ['an untracked file', (ws) => sh(ws, 'echo new > new.txt'), [{ path: 'new.txt', status: 'added' }]],
  ['a deletion', (ws) => rmSync(join(ws, 'gone.txt')), [{ path: 'gone.txt', status: 'removed' }]],
  ['a mode change', (ws) => chmodSync(join(ws, 'run.sh'), 0o755), [{ path: 'run.sh', status: 'modified' }]],
  [
    'an edit',
    (ws) => writeFileSync(join(ws, 'a.txt'), 'one\ntwo\n'),
    [{ path: 'a.txt', status: 'modified' }],
  ],
  [
    'a rename',
    (ws) => renameSync(join(ws, 'a.txt'), join(ws, 'b.txt')),
    [
      { path: 'a.txt', status: 'removed' },
      { path: 'b.txt', status: 'added' },
    ],
  ],
  ['a symlink', (ws) => symlinkSync('a.txt', join(ws, 'link')), [{ path: 'link', status: 'added' }]],
  [
    'a file deep in a new folder',
    (ws) => sh(ws, 'mkdir -p x/y && echo z > x/y/z.txt'),
    [{ path: 'x/y/z.txt', status: 'added' }],
  ],
  [
    'names with a space and a newline',
    (ws) => {
      writeFileSync(join(ws, 'a b.txt'), 'ab\n');
      writeFileSync(join(ws, 'line\nbreak.txt'), 'lb\n');
    },
    [
      { path: 'a b.txt', status: 'added' },
      { path: 'line\nbreak.txt', status: 'added' },
    ],
  ],
  [
    'a file the agent staged itself',
    (ws) => {
      writeFileSync(join(ws, 'staged.txt'), 's\n');
      git(ws, 'add', 'staged.txt');
    },
    [{ path: 'staged.txt', status: 'added' }],
  ],
];

function sh(cwd: string, script: string): boolean {
  execFileSync('sh', ['-c', script], { cwd, stdio: 'ignore' });
  return true;
}

describe('stageWorkingCopy', () => {
  for (const [what, make, files] of CHANGES)
    it(`sees ${what}, and the iteration records it`, async () => {
      const ws = await workspace();
      make(ws);
      expect(await vcs.hasChanges(ws)).toBe(true);
      const staged = await vcs.stageWorkingCopy(ws);
      expect(staged.changed).toBe(true);
      const ic = await vcs.commitIteration(ws, 'it', staged);
      expect(ic.files.map(({ path, status }) => ({ path, status }))).toEqual(files);
      expect(git(ws, 'rev-parse', 'HEAD^{tree}').trim()).toBe(staged.tree);
      expect(left(ws)).toEqual([]);
      // And the next check finds nothing more.
      expect((await vcs.stageWorkingCopy(ws)).changed).toBe(false);
      vcs.release(ws);
    });

  it('sees a change after an iteration, in a later iteration', async () => {
    const ws = await workspace();
    writeFileSync(join(ws, 'a.txt'), 'first\n');
    await vcs.commitIteration(ws, 'one', await vcs.stageWorkingCopy(ws));
    rmSync(join(ws, 'run.sh'));
    const staged = await vcs.stageWorkingCopy(ws);
    expect(staged.changed).toBe(true);
    const ic = await vcs.commitIteration(ws, 'two', staged);
    expect(ic.files.map((f) => [f.path, f.status])).toEqual([['run.sh', 'removed']]);
    expect(left(ws)).toEqual([]);
    vcs.release(ws);
  });

  const UNCHANGED: [string, (ws: string) => void][] = [
    ['nothing', () => {}],
    ['ignored files (.gitignore)', (ws) => sh(ws, 'mkdir build && echo o > build/out.o && echo l > x.log')],
    [
      'a file info/exclude leaves out',
      (ws) => {
        const info = resolve(ws, git(ws, 'rev-parse', '--git-common-dir').trim(), 'info');
        mkdirSync(info, { recursive: true });
        writeFileSync(join(info, 'exclude'), 'private.txt\n');
        writeFileSync(join(ws, 'private.txt'), 'p\n');
      },
    ],
    ['a protocol file', (ws) => writeFileSync(join(ws, '.incrementum-feedback'), 'ACCEPT\n')],
    [
      'a protocol file the agent staged',
      (ws) => {
        mkdirSync(join(ws, 'd'));
        writeFileSync(join(ws, 'd', '.incrementum-commit-message'), 'msg\n');
        git(ws, 'add', '-f', 'd/.incrementum-commit-message');
      },
    ],
    [
      'a file written and removed again',
      (ws) => {
        writeFileSync(join(ws, 'tmp.txt'), 't\n');
        rmSync(join(ws, 'tmp.txt'));
      },
    ],
    ['a touched file (same bytes, new mtime)', (ws) => writeFileSync(join(ws, 'a.txt'), 'one\n')],
  ];
  for (const [what, make] of UNCHANGED)
    it(`finds no change with ${what}, as status does`, async () => {
      const ws = await workspace();
      make(ws);
      expect(await vcs.hasChanges(ws)).toBe(false);
      const staged = await vcs.stageWorkingCopy(ws);
      expect(staged.changed).toBe(false);
      expect(staged.head).toBe(git(ws, 'rev-parse', 'HEAD').trim());
      vcs.release(ws);
    });

  it('finds no change when the agent stages a protocol file after an iteration', async () => {
    const ws = await workspace();
    writeFileSync(join(ws, 'a.txt'), 'first\n');
    await vcs.commitIteration(ws, 'one', await vcs.stageWorkingCopy(ws));
    // After an iteration nothing is taken out before the tree is written:
    // the tree differs from HEAD's in the protocol file alone.
    writeFileSync(join(ws, '.incrementum-feedback'), 'ACCEPT\n');
    git(ws, 'add', '-f', '.incrementum-feedback');
    expect(await vcs.hasChanges(ws)).toBe(false);
    expect((await vcs.stageWorkingCopy(ws)).changed).toBe(false);
    // With a real change too, the iteration records it and not the protocol file.
    writeFileSync(join(ws, 'a.txt'), 'second\n');
    const staged = await vcs.stageWorkingCopy(ws);
    expect(staged.changed).toBe(true);
    const ic = await vcs.commitIteration(ws, 'two', staged);
    expect(ic.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(git(ws, 'ls-tree', '--name-only', 'HEAD')).not.toContain('.incrementum-feedback');
    vcs.release(ws);
  });

  it('finds no change in a base that commits a protocol file, and keeps it out of the iteration', async () => {
    writeFileSync(join(repo, '.incrementum-feedback'), 'old\n');
    git(repo, 'add', '-f', '.incrementum-feedback');
    git(repo, 'commit', '-qm', 'protocol file committed');
    const ws = await workspace();
    expect((await vcs.stageWorkingCopy(ws)).changed).toBe(false);
    writeFileSync(join(ws, 'a.txt'), 'changed\n');
    const staged = await vcs.stageWorkingCopy(ws);
    expect(staged.changed).toBe(true);
    const ic = await vcs.commitIteration(ws, 'it', staged);
    // The protocol file's removal is not shown (fileStats leaves them out).
    expect(ic.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(git(ws, 'ls-tree', '--name-only', 'HEAD')).not.toContain('.incrementum-feedback');
    vcs.release(ws);
  });

  it("reads HEAD as git does when it reads it from the workspace's files", async () => {
    const ws = await workspace();
    writeFileSync(join(ws, 'a.txt'), 'first\n');
    const one = await vcs.commitIteration(ws, 'one', await vcs.stageWorkingCopy(ws));
    writeFileSync(join(ws, 'a.txt'), 'second\n');
    const two = await vcs.commitIteration(ws, 'two', await vcs.stageWorkingCopy(ws));
    const head = () => git(ws, 'rev-parse', 'HEAD').trim();
    expect(await vcs.head(ws)).toBe(two.commit_id);
    // The agent moves its branch back to a commit this instance made.
    git(ws, 'reset', '-q', '--soft', one.commit_id);
    expect(await vcs.head(ws)).toBe(one.commit_id);
    // Packed (no loose ref file), detached, and on a commit of the agent's own.
    git(ws, 'pack-refs', '--all');
    expect(await vcs.head(ws)).toBe(head());
    git(ws, 'checkout', '-q', '--detach', two.commit_id);
    expect(await vcs.head(ws)).toBe(two.commit_id);
    git(ws, '-c', 'user.name=A', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'agent');
    expect(await vcs.head(ws)).toBe(head());
    vcs.release(ws);
  });

  it("never takes HEAD from a file outside the workspace's refs", async () => {
    const ws = await workspace();
    writeFileSync(join(ws, 'a.txt'), 'first\n');
    const one = await vcs.commitIteration(ws, 'one', await vcs.stageWorkingCopy(ws));
    writeFileSync(join(ws, 'a.txt'), 'second\n');
    await vcs.commitIteration(ws, 'two', await vcs.stageWorkingCopy(ws));
    const gitDir = resolve(ws, git(ws, 'rev-parse', '--git-dir').trim());
    // The agent points HEAD out of refs/heads (`..`) at a file of its own
    // naming a commit this instance made: git refuses such a HEAD.
    writeFileSync(join(tmp.path, 'outside'), `${one.commit_id}\n`);
    writeFileSync(join(gitDir, 'HEAD'), `ref: refs/heads/../../../../outside\n`);
    const asGit = () => {
      try {
        return git(ws, 'rev-parse', '--verify', '-q', 'HEAD').trim();
      } catch {
        return null;
      }
    };
    expect(await vcs.head(ws).catch(() => null)).toBe(asGit());
    vcs.release(ws);
  });

  it('stages again when HEAD moved after the check (the agent committed)', async () => {
    const ws = await workspace();
    writeFileSync(join(ws, 'a.txt'), 'checked\n');
    const staged = await vcs.stageWorkingCopy(ws);
    writeFileSync(join(ws, 'late.txt'), 'late\n');
    git(ws, '-c', 'user.name=A', '-c', 'user.email=a@b', 'commit', '-qam', 'agent');
    const ic = await vcs.commitIteration(ws, 'it', staged);
    // The commit holds the late file too: its tree is not the stale one.
    expect(ic.files.map((f) => f.path).sort()).toEqual(['a.txt', 'late.txt']);
    expect(left(ws)).toEqual([]);
    vcs.release(ws);
  });
});
