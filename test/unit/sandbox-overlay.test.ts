// The dependency overlay's pure parts (src/proc/sandbox/overlay.ts): where a
// workspace's upper layers live, which folders may be overlaid, the argv
// that mounts them before bwrap, and the policy keeping them inside the
// workspace. test/e2e/sandbox-overlay.test.ts mounts the real thing.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxSection } from '../../src/model/config.js';
import { bwrapArgs } from '../../src/proc/sandbox/bwrap.js';
import {
  activeOverlays,
  overlayArgv,
  overlayBlocker,
  overlayFor,
  overlayHome,
  overlayOptions,
  removeOrphanOverlays,
  removeOverlays,
  safeDependencyDir,
} from '../../src/proc/sandbox/overlay.js';
import { buildPolicy } from '../../src/proc/sandbox/policy.js';
import { tempDir } from '../helpers/tmp.js';

const STATE = '/home/u/.local/state/incrementum';
const WS = `${STATE}/workspaces/r-1/2`;

let tmp: ReturnType<typeof tempDir> | null = null;
afterEach(() => {
  tmp?.cleanup();
  tmp = null;
});

describe('dependency overlay', () => {
  it("keeps a workspace's upper layers beside the workspaces, never inside their folder (a prune would take them for one)", () => {
    expect(overlayHome(STATE, WS)).toBe(`${STATE}/overlays/r-1/2`);
    expect(overlayHome(STATE, `${STATE}/landing/r-1/abc`)).toBe(`${STATE}/overlays/landing/r-1/abc`);
    // A scratch workspace elsewhere: by a hash of its path.
    expect(overlayHome(STATE, '/tmp/ii-doctor-ws-x/ws')).toMatch(
      new RegExp(`^${STATE}/overlays/other/[0-9a-f]{16}$`),
    );
    expect(overlayFor(STATE, WS, '/home/u/src/r', 'node_modules')).toEqual({
      path: `${WS}/node_modules`,
      lower: '/home/u/src/r/node_modules',
      upper: `${STATE}/overlays/r-1/2/node_modules/upper`,
      workRoot: `${STATE}/overlays/r-1/2/node_modules/work`,
    });
  });

  it('overlays only a folder inside the workspace', () => {
    expect(safeDependencyDir('node_modules')).toBe('node_modules');
    expect(safeDependencyDir('packages/a/node_modules/')).toBe('packages/a/node_modules');
    for (const bad of ['', '.', '/etc', '../x', 'a/../../x', '.git', 'a/.git'])
      expect(safeDependencyDir(bad), bad).toBeNull();
  });

  it('mounts through a constant script: the paths are its arguments, and bwrap comes last', () => {
    const o = overlayFor(STATE, WS, '/home/u/src/r', 'node_modules');
    const opts = overlayOptions(o, `${o.workRoot}/w1`);
    expect(opts).toBe(
      `lowerdir=/home/u/src/r/node_modules,upperdir=${o.upper},workdir=${o.workRoot}/w1,userxattr,index=off`,
    );
    const { command, args } = overlayArgv(
      { unshare: '/usr/bin/unshare', mount: '/usr/bin/mount' },
      [{ options: opts, path: o.path }],
      ['/usr/bin/bwrap', '--unshare-user', '--', 'npm', 'test'],
    );
    expect(command).toBe('/usr/bin/unshare');
    expect(args.slice(0, 6)).toEqual(['--user', '--map-root-user', '--mount', '--', '/bin/sh', '-c']);
    const script = args[6]!;
    expect(script).not.toContain('/home/u');
    expect(args.slice(7)).toEqual([
      'sh',
      '/usr/bin/mount',
      '1',
      opts,
      o.path,
      '/usr/bin/bwrap',
      '--unshare-user',
      '--',
      'npm',
      'test',
    ]);
  });

  it('refuses a path the mount options cannot hold', () => {
    expect(overlayBlocker(overlayFor(STATE, WS, '/home/u/src/r', 'node_modules'))).toBeNull();
    expect(overlayBlocker(overlayFor(STATE, WS, '/home/u/src/a,b', 'node_modules'))).toMatch(
      /a,b\/node_modules has a character/,
    );
    expect(overlayBlocker(overlayFor(STATE, WS, '/home/u/src/a:b', 'node_modules'))).toMatch(/a:b/);
  });

  it('the policy keeps overlays inside the workspace, and bwrap keeps the user ids when nested', () => {
    const inside = overlayFor(STATE, WS, '/home/u/src/r', 'node_modules');
    const outside = { ...inside, path: '/home/u/.ssh' };
    const p = buildPolicy({
      workspace: WS,
      repoRoot: '/home/u/src/r',
      stateDir: STATE,
      home: '/home/u',
      env: { HOME: '/home/u' },
      agentName: 'scripted',
      git: null,
      config: SandboxSection.parse({}),
      overlays: [inside, outside, { ...inside, path: WS }],
    });
    expect(p.overlays).toEqual([inside]);
    const a = bwrapArgs(p, () => 'dir', { disableUserns: true, ids: { uid: 1000, gid: 100 } });
    expect(a.slice(0, 6)).toEqual(['--unshare-user', '--disable-userns', '--uid', '1000', '--gid', '100']);
    expect(bwrapArgs(p, () => 'dir', { disableUserns: true })).not.toContain('--uid');
  });

  it('finds the overlays set up for a workspace, and removes them with it (or once it is gone)', () => {
    tmp = tempDir('ii-overlay-unit-');
    const state = join(tmp.path, 'state');
    const ws = join(state, 'workspaces', 'r-1', '2');
    const gone = join(state, 'workspaces', 'r-1', '3');
    mkdirSync(ws, { recursive: true });
    for (const w of [ws, gone]) {
      const o = overlayFor(state, w, '/src/r', 'node_modules');
      mkdirSync(o.upper, { recursive: true });
      mkdirSync(join(o.workRoot, 'w1', 'work'), { recursive: true, mode: 0o000 });
    }
    // Not overlays: a name that decodes outside the workspace, a folder without an upper layer.
    mkdirSync(join(overlayHome(state, ws), encodeURIComponent('../x'), 'upper'), { recursive: true });
    mkdirSync(join(overlayHome(state, ws), 'dist'), { recursive: true });
    expect(activeOverlays(state, ws, '/src/r').map((o) => o.path)).toEqual([join(ws, 'node_modules')]);
    expect(removeOrphanOverlays(state, 'r-1')).toEqual(['3']);
    expect(existsSync(overlayHome(state, gone))).toBe(false);
    expect(existsSync(overlayHome(state, ws))).toBe(true);
    removeOverlays(state, ws);
    expect(existsSync(overlayHome(state, ws))).toBe(false);
    expect(activeOverlays(state, ws, '/src/r')).toEqual([]);
  });
});
