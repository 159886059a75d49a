// The Vcs reads ii init and ii doctor guess from: what a commit holds at its
// root, a file's text there, and which ignore rule keeps a file out.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitVcs } from '../../src/vcs/git.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let repo: string;
beforeEach(() => {
  tmp = tempDir();
  repo = join(tmp.path, 'repo');
  mkdirSync(join(repo, 'sub'), { recursive: true });
  writeFileSync(join(repo, 'sub', 'req.txt'), 'x\n');
  gitRepo(repo, {
    'package.json': '{"name":"p"}\n',
    'a *.txt': 'star\n',
    '.gitignore': 'node_modules/\n*-lock.*\n',
  });
});
afterEach(() => tmp.cleanup());

describe('GitVcs files at a revision', () => {
  it('lists what a checkout of the commit has, not what the folder has', async () => {
    const vcs = new GitVcs();
    writeFileSync(join(repo, 'package-lock.json'), '{}');
    writeFileSync(join(repo, 'untracked.txt'), '');
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    expect((await vcs.filesAt(repo, head)).sort()).toEqual(['.gitignore', 'a *.txt', 'package.json', 'sub']);
    // Paths are literal: `a *.txt` is that one file, not a glob.
    expect(await vcs.filesAt(repo, head, ['package-lock.json', 'sub/req.txt', 'a *.txt', '*.txt'])).toEqual([
      'a *.txt',
      'sub/req.txt',
    ]);
    expect(await vcs.filesAt(repo, head, [])).toEqual([]);
    expect(await vcs.readFileAt(repo, head, 'package.json')).toBe('{"name":"p"}\n');
    expect(await vcs.readFileAt(repo, head, 'package-lock.json')).toBeNull();
  });

  it('names the rule that ignores each path, and leaves out the ones no rule ignores', async () => {
    const rules = await new GitVcs().ignoreRules(repo, [
      'package-lock.json',
      'package.json',
      'node_modules/x',
    ]);
    expect([...rules]).toEqual([
      ['package-lock.json', '`*-lock.*` in .gitignore:2'],
      ['node_modules/x', '`node_modules/` in .gitignore:1'],
    ]);
    expect((await new GitVcs().ignoreRules(repo, ['package.json'])).size).toBe(0);
  });
});
