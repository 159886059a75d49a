// A git command run in a group of its own (src/vcs/git-run.ts group: true:
// the remote commands, detached with setsid, so a hung push can be ended
// whole) is a session of its own: where Linux schedules each session as one
// (autogroup), it competed at nice 0 even from a runner of ii run's at
// [run] nice. Started by a niced process, its session gets that process's
// nice value, as the agents and tests a runner starts do (proc/priority.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const hasAutogroups = existsSync('/proc/self/autogroup');
let tmp: ReturnType<typeof tempDir> | null = null;
afterEach(() => tmp?.cleanup());

/** The autogroup line ("/autogroup-7 nice 7") of the session of a grouped git that a process at nice +`by` started. */
function groupedGitSession(by: number): string {
  tmp = tempDir('ii-git-nice-');
  const repo = join(tmp.path, 'repo');
  mkdirSync(repo);
  gitRepo(repo);
  const mod = join(process.cwd(), 'dist', 'src', 'vcs', 'git-run.js');
  // Its starter lowers the session just after git starts, and git may read it
  // before (a loaded machine): up to 5 s for it when it is to be lowered.
  const settled =
    by > 0 ? `for i in $(seq 50); do grep -q 'nice 0$' /proc/self/autogroup || break; sleep 0.1; done; ` : '';
  const script =
    `const { gitRaw } = await import(${JSON.stringify(mod)});` +
    `const r = await gitRaw(${JSON.stringify(repo)}, ['-c', ${JSON.stringify(`alias.ag=!${settled}cat /proc/self/autogroup`)}, 'ag'], { group: true });` +
    'process.stdout.write(r.stdout + r.stderr);';
  return execFileSync('nice', ['-n', String(by), process.execPath, '--input-type=module', '-e', script], {
    encoding: 'utf8',
  }).trim();
}

it.skipIf(!hasAutogroups)(
  'a grouped git started by a niced process runs in a session at its nice value',
  () => {
    expect(groupedGitSession(7)).toMatch(/^\/autogroup-\d+ nice 7$/);
  },
);

it.skipIf(!hasAutogroups)('one started at nice 0 leaves its session at 0', () => {
  expect(groupedGitSession(0)).toMatch(/^\/autogroup-\d+ nice 0$/);
});
