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
import { PathChanged, readConfined, writeConfined } from '../../src/agent/confined-fs.js';
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
