// ii run starts its runners through nice(1) ([run] nice): where none can be
// started (not on PATH), a runner runs at its starter's priority rather than
// not at all, and its log says so.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { spawnDetachedIi } from '../../src/job/detached.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir('ii-detached-nice-')));
afterEach(() => tmp.cleanup());

it('starts the runner at its starter’s priority when nice(1) cannot be started, saying so in its log', async () => {
  const log = join(tmp.path, 'runner.log');
  const path = process.env.PATH;
  process.env.PATH = join(tmp.path, 'nothing-here');
  let d: ReturnType<typeof spawnDetachedIi>;
  try {
    d = spawnDetachedIi(['--version'], tmp.path, join(tmp.path, 'state', 'incrementum'), log, 'ignore', 5);
  } finally {
    process.env.PATH = path;
  }
  const code = await new Promise((res) => d.child.once('exit', res));
  expect(code).toBe(0);
  const text = readFileSync(log, 'utf8');
  expect(text).toContain("nice(1) could not be started, so this runner runs at ii run's own priority");
  expect(text).toMatch(/\d+\.\d+\.\d+/); // ii --version ran
});
