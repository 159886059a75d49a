import { describe, expect, it } from 'vitest';
import { ReadOnlyWrites } from '../../src/proc/sandbox/read-only-hint.js';

// nyc (spawn-wrap) under the sandbox, as a newcomer on minimist saw it.
const NYC = `Error: EROFS: read-only file system, mkdir '/root/.node-spawn-wrap-47-3f194ba71dc2'
    at Object.mkdirSync (node:fs:1372:26)
    at setup (/ws/node_modules/spawn-wrap/index.js:426:5) {
  errno: -30,
  code: 'EROFS',
  syscall: 'mkdir',
  path: '/root/.node-spawn-wrap-47-3f194ba71dc2'
}`;

describe('ReadOnlyWrites: why sandboxed setup or tests failed', () => {
  it('names the path of a Node EROFS error and both ways out', () => {
    const r = new ReadOnlyWrites();
    r.add('> minimist@1.2.8 tests-only\n');
    r.add(NYC);
    const h = r.hint()!;
    expect(h).toContain('(/root/.node-spawn-wrap-47-3f194ba71dc2)');
    expect(h).toContain('[sandbox] writable');
    expect(h).toContain('[sandbox] mode = "off"');
  });

  it("reads a shell's refusal, and a line split across two writes", () => {
    const r = new ReadOnlyWrites();
    r.add('sh: 1: cannot create /home/u/.cache-x/log: Read-on');
    r.add('ly file system\n');
    expect(r.hint()).toContain('(/home/u/.cache-x/log)');
  });

  it('says nothing when nothing was refused as read-only', () => {
    const r = new ReadOnlyWrites();
    r.add('not ok 1 - adds\n  expected: 3\n  actual: 4\n');
    expect(r.hint()).toBeNull();
  });
});

it("ReadOnlyWrites reads coreutils' quoted path", () => {
  const r = new ReadOnlyWrites();
  r.add("touch: cannot touch '/tmp/a b/from-test': Read-only file system\n");
  expect(r.hint()).toContain('(/tmp/a b/from-test)');
});

it('ReadOnlyWrites shows a crafted path escaped, and a secret in it redacted', () => {
  const r = new ReadOnlyWrites();
  r.add(
    "touch: cannot touch '/tmp/\x1b[2J/ghp_0123456789abcdefghijABCDEFGHIJ012345': Read-only file system\n",
  );
  const h = r.hint()!;
  expect(h).not.toContain('\x1b');
  expect(h).not.toContain('ghp_0123456789abcdefghijABCDEFGHIJ012345');
});
