// The board under tmux over a real repository: what each tmux test of the
// dashboard sets up and must leave nothing of.
import { afterEach } from 'vitest';
import { JobFixture } from './job.js';
import { runningIn } from './procs.js';
import { Tmux } from './tmux.js';

/**
 * A test file's repository (`fixture`, a JobFixture) and tmux session
 * (`tmux`), ended after each test: the session killed, every process still
 * working in the repository's temp dir (a runner, a detached job) killed, the
 * dir removed. Call it once at the top of the file (it registers the afterEach).
 */
export function tmuxJobs() {
  let f: JobFixture | null = null;
  let t: Tmux | null = null;
  afterEach(() => {
    t?.kill();
    t = null;
    if (!f) return;
    for (const pid of runningIn(f.tmp.path))
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    f.cleanup();
    f = null;
  });
  return {
    fixture(prefix: string): JobFixture {
      return (f = new JobFixture(prefix));
    },
    tmux(dir: string): Tmux {
      return (t = new Tmux(dir));
    },
  };
}
