// An idle standby runner goes once the way a test command goes (a command of
// its own, in a process group of its own, through execa), so that the job it
// is handed later does not pay for that way's first use beside its agent's
// start. The rehearsal must touch nothing and end with the standby.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { spawnStandbyJob } from '../../src/job/detached.js';
import { gitRepo, tempDir, waitFor } from '../helpers/tmp.js';
import { traceMarks } from '../helpers/trace.js';

let tmp: ReturnType<typeof tempDir> | null = null;
afterEach(() => {
  vi.unstubAllEnvs();
  tmp?.cleanup();
  tmp = null;
});

const marks = (file: string, pid: number) => traceMarks(file, pid).map((m) => m.mark);

it('an idle standby rehearses a command once, touching nothing, and still ends at once when dismissed', async () => {
  tmp = tempDir('ii-standby-rehearsal-');
  mkdirSync(join(tmp.path, 'repo'));
  const root = gitRepo(join(tmp.path, 'repo'), {
    'README.md': '# test\n',
    'incrementum.toml': '[agent]\npreset = "scripted"\n\n[job]\ntest-commands = ["true"]\n',
  });
  const trace = join(tmp.path, 'trace.jsonl');
  vi.stubEnv('II_TRACE', trace);
  const s = spawnStandbyJob({ root, slug: 'r' }, join(tmp.path, 'state', 'incrementum'));
  const exit = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
  try {
    await waitFor(() => marks(trace, s.pid).includes('rehearsed'), 'the rehearsal done', 30_000);
    expect(marks(trace, s.pid).filter((m) => m === 'rehearsed')).toHaveLength(1);
    expect(marks(trace, s.pid).indexOf('standby_ready')).toBeLessThan(
      marks(trace, s.pid).indexOf('rehearsed'),
    );
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' })).toBe('');
    s.dismiss();
    expect(await exit).toBe(0);
  } finally {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  }
});
