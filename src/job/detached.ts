// Starting `ii` as a detached background process: its own process group (a
// Ctrl-C or SIGKILL of whoever started it never reaches it), the same state
// dir, stdout and stderr appended to a log file. The dashboard's retry and
// the backlog runner (`ii run`) start their job runners this way, so each
// job is its own runner and outlives its starter.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { iiBin } from '../package-root.js';
import { jobDir } from '../state/paths.js';

export interface Detached {
  pid: number;
  log: string;
  /** The child; its 'exit' fires while the starter lives. Already unref'd. */
  child: ChildProcess;
}

/** Runs `ii <args>` in `repoRoot`, detached, logging to `log`. Returns at once. */
export function spawnDetachedIi(args: string[], repoRoot: string, stateDir: string, log: string): Detached {
  mkdirSync(dirname(log), { recursive: true, mode: 0o700 });
  const fd = openSync(log, 'a', 0o600);
  try {
    // The state dir is $XDG_STATE_HOME/incrementum: hand the same one down.
    const env = { ...process.env };
    if (basename(stateDir) === 'incrementum') env.XDG_STATE_HOME = dirname(stateDir);
    const child = spawn(process.execPath, [iiBin(), ...args], {
      cwd: repoRoot,
      env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    child.on('error', () => {});
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ii ${args.join(' ')}`);
    return { pid: child.pid, log, child };
  } finally {
    closeSync(fd);
  }
}

/** A file name part from a time: 2026-11-23T21-45-00-123Z. */
export const stamp = (d = new Date()): string => d.toISOString().replace(/[:.]/g, '-');

/**
 * The exit code of `ii job do --backlog` when its claim was refused (another
 * runner took the todo first, or it stopped being ready): no job was made.
 * EX_TEMPFAIL, from sysexits.h.
 */
export const CLAIM_LOST_EXIT = 75;

/**
 * Starts a detached job runner for a todo of the backlog: `ii job do <todo>
 * --backlog`, which claims the todo only while it is ready (exiting with
 * CLAIM_LOST_EXIT otherwise) and runs the job to its end.
 */
export function spawnBacklogJob(
  todoId: string,
  repo: { root: string; slug: string },
  stateDir: string,
  o: { agent?: string } = {},
): Detached {
  const log = join(stateDir, 'runs', repo.slug, `${stamp()}-${todoId}.log`);
  const args = ['job', 'do', todoId, '--backlog', '--no-edit', ...(o.agent ? ['--agent', o.agent] : [])];
  return spawnDetachedIi(args, repo.root, stateDir, log);
}

/**
 * Starts `ii job land <job>` detached (the dashboard's `m`), its output in a
 * log in the job's directory; the landing records each step on the job, so
 * its card shows how it goes.
 */
export function spawnDetachedLand(jobId: string, repoRoot: string, stateDir: string): Detached {
  const log = join(jobDir(stateDir, jobId), `land-${stamp()}.log`);
  return spawnDetachedIi(['job', 'land', jobId], repoRoot, stateDir, log);
}
