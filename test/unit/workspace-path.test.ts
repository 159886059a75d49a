// The path check every fs/* request and permission answer rests on, on real
// files: each component is resolved as the kernel would, the last one too.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { realPathOf, WorkspaceRoot } from '../../src/agent/workspace-path.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir('ii-wspath-');
afterAll(tmp.cleanup);
const WS = join(tmp.path, 'ws');
const OUT = join(tmp.path, 'out');
mkdirSync(join(WS, 'src'), { recursive: true });
mkdirSync(join(OUT, 'deep'), { recursive: true });
writeFileSync(join(WS, 'src', 'a.txt'), 'a');
writeFileSync(join(OUT, 'secret.txt'), 's');
// The shapes an agent can make inside its workspace.
symlinkSync(join(OUT, 'new.txt'), join(WS, 'dangling')); // target does not exist
symlinkSync('../out/new.txt', join(WS, 'dangling-rel'));
symlinkSync(OUT, join(WS, 'out-dir'));
symlinkSync(join(OUT, 'deep'), join(WS, 'deep-dir'));
symlinkSync('dangling', join(WS, 'chain')); // chain -> dangling -> outside
symlinkSync('chain', join(WS, 'chain2'));
symlinkSync('src/a.txt', join(WS, 'alias')); // a link that stays inside
symlinkSync('alias', join(WS, 'alias-chain'));
symlinkSync('src', join(WS, 'src-link'));
symlinkSync('loop-b', join(WS, 'loop-a'));
symlinkSync('loop-a', join(WS, 'loop-b'));
const ws = new WorkspaceRoot(WS);
const real = (p: string) => join(ws.real, p);

describe('WorkspaceRoot.resolveInside', () => {
  it('takes plain paths inside, existing or not, relative or absolute', () => {
    expect(ws.resolveInside('src/a.txt')).toBe(real('src/a.txt'));
    expect(ws.resolveInside(join(WS, 'src/a.txt'))).toBe(real('src/a.txt'));
    expect(ws.resolveInside('new/dir/file.txt')).toBe(real('new/dir/file.txt'));
    expect(ws.resolveInside('./src/../src/./a.txt')).toBe(real('src/a.txt'));
    expect(ws.resolveInside('..name')).toBe(real('..name'));
    expect(ws.resolveInside('')).toBeNull();
  });

  it('refuses paths that climb out or are elsewhere', () => {
    expect(ws.resolveInside('../out/secret.txt')).toBeNull();
    expect(ws.resolveInside('src/../../out/x')).toBeNull();
    expect(ws.resolveInside(join(OUT, 'secret.txt'))).toBeNull();
    expect(ws.resolveInside('/etc/passwd')).toBeNull();
  });

  it('follows a dangling link to its target outside', () => {
    expect(ws.resolveInside('dangling')).toBeNull();
    expect(ws.resolveInside('dangling-rel')).toBeNull();
    expect(realPathOf(join(WS, 'dangling'))).toBe(join(realPathOf(OUT)!, 'new.txt'));
  });

  it('follows a link to a directory outside, for files that exist or not', () => {
    expect(ws.resolveInside('out-dir/secret.txt')).toBeNull();
    expect(ws.resolveInside('out-dir/new.txt')).toBeNull();
    expect(ws.resolveInside('out-dir')).toBeNull();
  });

  it('follows link chains to their end', () => {
    expect(ws.resolveInside('chain')).toBeNull();
    expect(ws.resolveInside('chain2')).toBeNull();
    expect(ws.resolveInside('alias-chain')).toBe(real('src/a.txt'));
    expect(ws.resolveInside('src-link/a.txt')).toBe(real('src/a.txt'));
  });

  it('climbs `..` from a link target, not from the link', () => {
    // deep-dir/.. is out/, not the workspace: lexically it would look inside.
    expect(ws.resolveInside('deep-dir/../secret.txt')).toBeNull();
    expect(ws.resolveInside('deep-dir/../new.txt')).toBeNull();
    expect(ws.resolveInside('src-link/../src/a.txt')).toBe(real('src/a.txt'));
  });

  it('refuses links that loop', () => {
    expect(ws.resolveInside('loop-a')).toBeNull();
    expect(ws.resolveInside('loop-a/x')).toBeNull();
    expect(realPathOf(join(WS, 'loop-b'))).toBeNull();
  });

  it('works from a workspace reached through a link', () => {
    const viaLink = join(tmp.path, 'ws-link');
    symlinkSync(WS, viaLink);
    const w = new WorkspaceRoot(viaLink);
    expect(w.real).toBe(ws.real);
    expect(w.resolveInside('src/a.txt')).toBe(real('src/a.txt'));
    expect(w.resolveInside(join(viaLink, 'new.txt'))).toBe(real('new.txt'));
    expect(w.resolveInside('dangling')).toBeNull();
  });
});
