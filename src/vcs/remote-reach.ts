// Whether a remote answers (`git ls-remote`), within a bounded time: for
// `ii doctor` on a shared store, where every machine pushes to and fetches
// from it. git runs in its own session (no terminal to ask a password or a
// host key on: ssh fails instead of waiting) and process group, killed whole
// on the timeout, so an ssh it started is never left behind. The user's ssh
// setup (core.sshCommand, GIT_SSH_COMMAND) is used as it is.
import { spawn } from 'node:child_process';
import { startTicks, trackGroup } from './git-groups.js';

export interface RemoteReach {
  ok: boolean;
  /** git's complaint (its last lines), or that it timed out. */
  why?: string;
}

export function reachRemote(root: string, name: string, timeoutMs = 15_000): Promise<RemoteReach> {
  return new Promise((resolve) => {
    const child = spawn('git', ['ls-remote', '--quiet', '--heads', name], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        LC_ALL: 'C',
        GIT_TERMINAL_PROMPT: '0',
        GIT_ASKPASS: '',
        SSH_ASKPASS: '',
      },
    });
    // Ended with this process too (exit, Ctrl-C of ii doctor): out of the terminal's group, nothing else would.
    const untrack = child.pid !== undefined ? trackGroup(child.pid, startTicks(child.pid)) : null;
    let timedOut = false;
    const err: Buffer[] = [];
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => {
      clearTimeout(timer);
      untrack?.();
      resolve({ ok: false, why: e.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      killGroup(); // anything git left in its group (an ssh master) ends with it
      untrack?.();
      if (timedOut) return resolve({ ok: false, why: `no answer within ${timeoutMs / 1000} s` });
      if (code === 0) return resolve({ ok: true });
      const lines = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join('\n');
      resolve({ ok: false, why: lines || `git ls-remote exited with ${code}` });
    });
  });
}
