// Runners started in the background run with RUNNER_NODE_ARGS: the flags that
// keep an idle concurrent job's memory under the [backlog] goal.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { RUNNER_NODE_ARGS, spawnStandbyJob } from '../../src/job/detached.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir> | null = null;
afterEach(() => {
  tmp?.cleanup();
  tmp = null;
});

it('a standby runner runs node with the runner flags, and exits when dismissed', async () => {
  tmp = tempDir('ii-flags-');
  mkdirSync(join(tmp.path, 'repo'));
  const root = gitRepo(join(tmp.path, 'repo'));
  const stateDir = join(tmp.path, 'state', 'incrementum');
  const s = spawnStandbyJob({ root, slug: 'r' }, stateDir);
  let exited = false;
  s.child.on('exit', () => (exited = true));
  const argv = readFileSync(`/proc/${s.pid}/cmdline`, 'utf8').split('\0');
  expect(RUNNER_NODE_ARGS.length).toBeGreaterThan(0);
  // The flags come before the script: node's, not the CLI's.
  const script = argv.findIndex((a) => a.endsWith('ii.js'));
  expect(script).toBeGreaterThan(0);
  expect(argv.slice(1, script)).toEqual(RUNNER_NODE_ARGS);
  s.dismiss();
  await waitFor(() => exited, 'its exit');
});
