// Reads and writes for the agent at a path already checked, on real files:
// whatever the agent swaps in between the check and the write (a link in
// place of a directory or of the file), nothing lands outside the workspace.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitPathRefused, PathChanged, readConfined, writeConfined } from '../../src/agent/confined-fs.js';
import { WorkspaceRoot } from '../../src/agent/workspace-path.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: { path: string; cleanup: () => void };
let WS: string;
let OUT: string;
let ws: WorkspaceRoot;
beforeEach(() => {
  tmp = tempDir('ii-confined-');
  WS = join(tmp.path, 'ws');
  OUT = join(tmp.path, 'out');
  mkdirSync(WS);
  mkdirSync(OUT);
  ws = new WorkspaceRoot(WS);
});
afterEach(() => tmp.cleanup());

/** The checked path, as the fs/* handlers get it. */
const checked = (p: string) => {
  const r = ws.resolveInside(p);
  expect(r).not.toBeNull();
  return r!;
};
const outside = () => readdirSync(OUT);
const entries = (dir: string) => readdirSync(dir).sort();

describe('writeConfined', () => {
  it('creates the file and its missing directories, and leaves no temp file', async () => {
    await writeConfined(ws, checked('a/b/c.txt'), 'hello\n');
    expect(readFileSync(join(WS, 'a/b/c.txt'), 'utf8')).toBe('hello\n');
    expect(entries(join(WS, 'a/b'))).toEqual(['c.txt']);
  });

  it("replaces an existing file's content and keeps its mode", async () => {
    writeFileSync(join(WS, 'run.sh'), 'old');
    chmodSync(join(WS, 'run.sh'), 0o751);
    await writeConfined(ws, checked('run.sh'), 'new');
    expect(readFileSync(join(WS, 'run.sh'), 'utf8')).toBe('new');
    expect(statSync(join(WS, 'run.sh')).mode & 0o777).toBe(0o751);
  });

  it('writes through a link that stays inside to its target', async () => {
    mkdirSync(join(WS, 'src'));
    writeFileSync(join(WS, 'src/a.txt'), 'old');
    symlinkSync('src/a.txt', join(WS, 'alias'));
    await writeConfined(ws, checked('alias'), 'new');
    expect(readFileSync(join(WS, 'src/a.txt'), 'utf8')).toBe('new');
  });

  it('a directory swapped for a link outside after the check: refused, nothing outside', async () => {
    mkdirSync(join(WS, 'sub'));
    const p = checked('sub/new.txt');
    rmSync(join(WS, 'sub'), { recursive: true });
    symlinkSync(OUT, join(WS, 'sub'));
    await expect(writeConfined(ws, p, 'x')).rejects.toThrow(PathChanged);
    await expect(writeConfined(ws, p, 'x')).rejects.toThrow(
      /sub became a symbolic link after it was checked/,
    );
    expect(outside()).toEqual([]);
  });

  it('a missing directory that appears as a link outside after the check: refused, nothing outside', async () => {
    const p = checked('later/deeper/new.txt');
    symlinkSync(OUT, join(WS, 'later'));
    await expect(writeConfined(ws, p, 'x')).rejects.toThrow(PathChanged);
    expect(outside()).toEqual([]);
  });

  it('a dangling link put in place of the file after the check: the link is replaced, not followed', async () => {
    const p = checked('f.txt');
    symlinkSync(join(OUT, 'f.txt'), join(WS, 'f.txt'));
    await writeConfined(ws, p, 'inside');
    expect(outside()).toEqual([]);
    expect(statSync(join(WS, 'f.txt')).isFile()).toBe(true);
    expect(readFileSync(join(WS, 'f.txt'), 'utf8')).toBe('inside');
  });

  it('an existing file swapped for a link to a file outside: the outside file is untouched', async () => {
    writeFileSync(join(WS, 'f.txt'), 'mine');
    writeFileSync(join(OUT, 'victim.txt'), 'precious');
    const p = checked('f.txt');
    rmSync(join(WS, 'f.txt'));
    symlinkSync(join(OUT, 'victim.txt'), join(WS, 'f.txt'));
    await writeConfined(ws, p, 'overwritten?');
    expect(readFileSync(join(OUT, 'victim.txt'), 'utf8')).toBe('precious');
    expect(readFileSync(join(WS, 'f.txt'), 'utf8')).toBe('overwritten?');
  });

  it('a hard link to a file outside is replaced, not written through', async () => {
    writeFileSync(join(OUT, 'victim.txt'), 'precious');
    linkSync(join(OUT, 'victim.txt'), join(WS, 'hard.txt'));
    await writeConfined(ws, checked('hard.txt'), 'mine');
    expect(readFileSync(join(OUT, 'victim.txt'), 'utf8')).toBe('precious');
    expect(readFileSync(join(WS, 'hard.txt'), 'utf8')).toBe('mine');
  });

  it('the workspace moved away and a link left in its place: refused, nothing outside', async () => {
    mkdirSync(join(WS, 'sub'));
    const p = checked('sub/new.txt');
    renameSync(WS, join(tmp.path, 'moved'));
    symlinkSync(OUT, WS);
    // The root itself is opened by its real path: a link there is a change too.
    await expect(writeConfined(ws, p, 'x')).rejects.toThrow();
    expect(outside()).toEqual([]);
  });

  it('refuses to write over a directory', async () => {
    mkdirSync(join(WS, 'd'));
    await expect(writeConfined(ws, checked('d'), 'x')).rejects.toThrow(/EISDIR/);
    await expect(writeConfined(ws, checked('.'), 'x')).rejects.toThrow(/EISDIR/);
  });
});

describe('readConfined', () => {
  it('reads a file, and names the real path when there is none', async () => {
    writeFileSync(join(WS, 'a.txt'), 'hello');
    expect(await readConfined(ws, checked('a.txt'))).toBe('hello');
    const err = await readConfined(ws, checked('nope/missing.txt')).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ENOENT' });
    expect(String(err)).toContain(join(ws.real, 'nope'));
    expect(String(err)).not.toContain('/proc/');
  });

  it('a file or directory swapped for a link outside after the check: refused, nothing read', async () => {
    writeFileSync(join(OUT, 'secret.txt'), 'top secret');
    writeFileSync(join(WS, 'secret.txt'), 'mine');
    mkdirSync(join(WS, 'sub'));
    writeFileSync(join(WS, 'sub/secret.txt'), 'mine');
    const file = checked('secret.txt');
    const inDir = checked('sub/secret.txt');
    rmSync(join(WS, 'secret.txt'));
    symlinkSync(join(OUT, 'secret.txt'), join(WS, 'secret.txt'));
    rmSync(join(WS, 'sub'), { recursive: true });
    symlinkSync(OUT, join(WS, 'sub'));
    await expect(readConfined(ws, file)).rejects.toThrow(PathChanged);
    await expect(readConfined(ws, inDir)).rejects.toThrow(PathChanged);
  });

  it('a FIFO is refused instead of hanging the read', async () => {
    execFileSync('mkfifo', [join(WS, 'pipe')]);
    await expect(readConfined(ws, checked('pipe'))).rejects.toThrow(/not a regular file/);
  });
});

describe("the workspace's .git and git directories", () => {
  const LINK = 'gitdir: /elsewhere/.git/worktrees/ws\n';
  /** A workspace as `git worktree add` leaves it, with a nested repository, a bare one and a gitdir kept apart. */
  function repos() {
    writeFileSync(join(WS, '.git'), LINK);
    mkdirSync(join(WS, 'sub'));
    execFileSync('git', ['init', '-q', join(WS, 'vendor/lib')]);
    execFileSync('git', ['init', '-q', '--bare', join(WS, 'mirror.git')]);
    // A submodule-style checkout: `.git` is a file, its git dir sits elsewhere (a worktree's has a commondir).
    mkdirSync(join(WS, 'modules/sub'), { recursive: true });
    writeFileSync(join(WS, 'modules/sub/HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(WS, 'modules/sub/commondir'), '../..\n');
  }
  const REFUSED = [
    '.git',
    './.git',
    'sub/../.git',
    'missing/../.git',
    'WS/.git',
    '.GIT',
    '.Git',
    'alias',
    'vendor/lib/.git/config',
    'vendor/lib/.git/hooks/post-commit',
    'vendor/lib/.GIT/HEAD',
    'mirror.git/HEAD',
    'mirror.git/refs/heads/main',
    'modules/sub/HEAD',
    'modules/sub/new-file',
    'git-alias/config',
  ];
  const abs = (p: string) => (p.startsWith('WS/') ? join(WS, p.slice(3)) : p);
  const contents = () =>
    execFileSync('find', ['.', '-path', './vendor/lib/.git/objects', '-prune', '-o', '-print'], {
      cwd: WS,
      encoding: 'utf8',
    })
      .split('\n')
      .sort()
      .join('\n');

  it('writes are refused with a reason for the agent, nothing written or created', async () => {
    repos();
    symlinkSync('.git', join(WS, 'alias'));
    symlinkSync('vendor/lib/.git', join(WS, 'git-alias'));
    const before = contents();
    for (const p of REFUSED) {
      const err = await writeConfined(ws, checked(abs(p)), 'gitdir: /the/user/repo/.git\n').catch(
        (e: unknown) => e,
      );
      expect(err, p).toBeInstanceOf(GitPathRefused);
      expect(String(err), p).toMatch(/git (directory|repository)/);
    }
    expect(readFileSync(join(WS, '.git'), 'utf8')).toBe(LINK);
    expect(contents()).toBe(before);
  });

  it("the workspace's own .git says why it matters", async () => {
    writeFileSync(join(WS, '.git'), LINK);
    await expect(writeConfined(ws, checked('.git'), 'x')).rejects.toThrow(
      /link to its git repository, which incrementum's own git commands follow/,
    );
    await expect(writeConfined(ws, checked('.git/config'), 'x')).rejects.toThrow(/^\.git is a git directory/);
  });

  it('reads are refused the same way', async () => {
    repos();
    symlinkSync('.git', join(WS, 'alias'));
    symlinkSync('vendor/lib/.git', join(WS, 'git-alias'));
    for (const p of REFUSED.filter((x) => !/new-file|post-commit/.test(x)))
      await expect(readConfined(ws, checked(abs(p))), p).rejects.toThrow(GitPathRefused);
  });

  it('a .git directory at the top (a plain repository as the workspace) is refused too', async () => {
    execFileSync('git', ['init', '-q', WS]);
    await expect(readConfined(ws, checked('.git/HEAD'))).rejects.toThrow(GitPathRefused);
    await expect(writeConfined(ws, checked('.git/HEAD'), 'ref: refs/heads/x\n')).rejects.toThrow(
      GitPathRefused,
    );
    expect(readFileSync(join(WS, '.git/HEAD'), 'utf8')).not.toContain('refs/heads/x');
  });

  it('names that only look like git stay the agent’s', async () => {
    repos();
    // A HEAD file alone does not make a git directory (git asks for objects and refs, or a commondir).
    mkdirSync(join(WS, 'docs'));
    writeFileSync(join(WS, 'docs/HEAD'), 'a heading\n');
    for (const p of [
      '.gitignore',
      '.github/workflows/ci.yml',
      'git/notes.md',
      'x.git',
      'docs/HEAD',
      'docs/new.md',
      'sub/.gitkeep',
    ]) {
      await writeConfined(ws, checked(p), 'ok\n');
      expect(await readConfined(ws, checked(p)), p).toBe('ok\n');
    }
  });
});
