// A spawn in a directory that is gone says so, instead of "spawn git ENOENT"
// (which reads as "git is not installed").
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { workspaceGoneReason } from '../../src/job/workspace-gone.js';
import { GoneCwdError, gitRaw } from '../../src/vcs/git-run.js';
import { GitVcs } from '../../src/vcs/git.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let ws: string;
beforeEach(() => {
  tmp = tempDir();
  ws = join(tmp.path, 'workspaces', 'repo', '3');
  mkdirSync(ws, { recursive: true });
  rmSync(ws, { recursive: true });
});
afterEach(() => tmp.cleanup());

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

it('git in a removed directory rejects with GoneCwdError, still coded ENOENT', async () => {
  const err = await rejection(gitRaw(ws, ['status', '--porcelain']));
  expect(err).toBeInstanceOf(GoneCwdError);
  expect((err as GoneCwdError).code).toBe('ENOENT');
  expect(err.message).toBe(`${ws} was removed while it was in use (git status could not start there)`);
  // Not taken for a missing git.
  const viaVcs = await rejection(new GitVcs().hasChanges(ws));
  expect(viaVcs.message).not.toContain('not installed');
});

it("names the job's workspace when the error came from its being gone, and nothing else", async () => {
  const gone = await rejection(gitRaw(ws, ['rev-parse', 'HEAD']));
  const said = `the workspace ${ws} was removed while the job was using it (git rev-parse could not start there)`;
  expect(workspaceGoneReason(gone, { workspace: ws })).toBe(said);
  // Before the job knows its workspace (starting it): any under the workspaces dir.
  expect(workspaceGoneReason(gone, { workspacesDir: join(tmp.path, 'workspaces') })).toBe(said);
  expect(workspaceGoneReason(gone, { workspacesDir: join(tmp.path, 'elsewhere') })).toBeNull();
  // Any spawn's ENOENT while the workspace is gone (a test command's shell).
  const sh = Object.assign(new Error('spawn /bin/sh ENOENT'), { code: 'ENOENT' });
  expect(workspaceGoneReason(sh, { workspace: ws })).toBe(
    `the workspace ${ws} was removed while the job was using it (spawn /bin/sh ENOENT)`,
  );
  // The workspace still there, or another error: null.
  expect(workspaceGoneReason(sh, { workspace: tmp.path })).toBeNull();
  expect(workspaceGoneReason(new Error('boom'), { workspace: ws })).toBeNull();
});
