// Running git: argv arrays only (no shell), stdin for anything long, a clean
// environment so a GIT_DIR or GIT_INDEX_FILE inherited from a hook can never
// point our commands at the user's checkout.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { niceGroupSession, startTicks, trackGroup } from './git-groups.js';
import { decodeBytes } from '../text/bytes.js';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly cwd: string,
    readonly result: GitResult,
  ) {
    super(`git ${args.join(' ')} failed in ${cwd}: ${result.stderr.trim() || `exit code ${result.code}`}`);
    this.name = 'GitError';
  }
}

/**
 * git could not start because its working directory is gone: spawn says
 * "spawn git ENOENT", which reads as "git is not installed". Keeps that
 * code, so callers that tell a missing git apart by it still can.
 */
export class GoneCwdError extends Error {
  readonly code = 'ENOENT';
  /** What could not run: "git <command> could not start there". */
  readonly detail: string;
  constructor(
    readonly cwd: string,
    args: string[],
  ) {
    const detail = `git ${args.find((a) => !a.startsWith('-')) ?? ''} could not start there`;
    super(`${cwd} was removed while it was in use (${detail})`);
    this.name = 'GoneCwdError';
    this.detail = detail;
  }
}

/** A spawn error of git in `cwd`: ENOENT with `cwd` gone is a GoneCwdError. */
export function spawnError(err: Error, cwd: string, args: string[]): Error {
  return (err as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(cwd)
    ? new GoneCwdError(cwd, args)
    : err;
}

const SCRUBBED = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_COMMON_DIR',
  'GIT_PREFIX',
];

export function gitEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', ...extra };
  for (const k of SCRUBBED) delete env[k];
  return env;
}

/** Records a process group for a job (src/proc/recorded.ts's GroupRecorder is one). */
export type GitGroupRecorder = (
  pgid: number,
  label: string,
  leaderStart?: number | null,
) => { forget(): Promise<void> };

export interface GitOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
  /** Kills git after this long; the result then has code -1 and says so in stderr. */
  timeoutMs?: number;
  /**
   * Runs git in a process group of its own, and a timeout kills the whole
   * group: a push or fetch starts children (ssh, a remote helper,
   * receive-pack) that would outlive git killed alone.
   */
  group?: boolean;
  /**
   * With `group`: the group is recorded for a job while it runs, so that
   * the cleanup after a runner killed outright (kill -9) ends it.
   */
  record?: { recorder: GitGroupRecorder; label: string };
  /** Aborting kills git (its whole group with `group`); the result then has code -1 and says so. */
  signal?: AbortSignal;
  /**
   * Runs just before git is spawned: when it throws, git is not run and the
   * call rejects with its error (a workspace whose .git was repointed). The
   * git dir and work tree it returns are given to git explicitly, so git does
   * not read the `.git` link again after the check.
   */
  before?: () => { gitDir: string; workTree: string } | null | void;
}

/** git's argv: our fixed options, the checked git dir and work tree if any, then `args`. */
function argv(cwd: string, args: string[], o: GitOptions): string[] {
  let pin;
  try {
    pin = o.before?.();
  } catch (err) {
    // A workspace removed whole has no .git either: that is not a redirect
    // (git cannot start in a folder that is gone), so say it was removed.
    if (!existsSync(cwd)) throw new GoneCwdError(cwd, args);
    throw err;
  }
  const where = pin ? [`--git-dir=${pin.gitDir}`, `--work-tree=${pin.workTree}`] : [];
  return ['-c', 'core.quotepath=off', '--no-pager', ...where, ...args];
}

/** Runs git in `cwd` and resolves with its output whatever the exit code. */
export function gitRaw(cwd: string, args: string[], o: GitOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    if (o.signal?.aborted) return resolve({ code: -1, stdout: '', stderr: 'cancelled' });
    const child = spawn('git', argv(cwd, args, o), {
      cwd,
      env: gitEnv(o.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: o.group === true,
    });
    const pgid = o.group === true ? child.pid : undefined;
    // A session of its own (detached: setsid), so not lowered with a niced
    // runner where sessions are scheduled as one (proc/priority.ts): given
    // this process's nice value, as the agents and tests a runner starts are.
    if (pgid !== undefined) niceGroupSession(pgid);
    // Taken now, while git cannot have been reaped: the group's identity for every later signal.
    const leaderStart = pgid !== undefined ? startTicks(pgid) : null;
    // Ended with this process too (exit, Ctrl-C): out of the terminal's group, nothing else would.
    const untrack = pgid !== undefined ? trackGroup(pgid, leaderStart) : null;
    const recorded =
      pgid !== undefined && o.record ? o.record.recorder(pgid, o.record.label, leaderStart) : null;
    let ended: 'timeout' | 'cancelled' | null = null;
    const kill = (why: 'timeout' | 'cancelled') => {
      ended ??= why;
      try {
        if (pgid === undefined) child.kill('SIGKILL');
        else process.kill(-pgid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = o.timeoutMs === undefined ? null : setTimeout(() => kill('timeout'), o.timeoutMs);
    const onAbort = () => kill('cancelled');
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      if (timer) clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      untrack?.();
      void recorded?.forget();
    };
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => {
      done();
      reject(spawnError(e, cwd, args));
    });
    child.stdin.on('error', () => {});
    child.stdin.end(o.input ?? '');
    child.on('close', (code) => {
      done();
      resolve({
        code: ended ? -1 : (code ?? -1),
        // A file name need not be UTF-8: its other bytes are kept, not made U+FFFD (bytes.ts).
        stdout: decodeBytes(Buffer.concat(out)),
        stderr:
          ended === 'timeout'
            ? `timed out after ${o.timeoutMs! / 1000}s`
            : ended === 'cancelled'
              ? 'cancelled'
              : decodeBytes(Buffer.concat(err)),
      });
    });
  });
}

/** Runs git in `cwd`; stdout with the final newline trimmed, GitError on a non-zero exit. */
export async function git(cwd: string, args: string[], o: GitOptions = {}): Promise<string> {
  const r = await gitRaw(cwd, args, o);
  if (r.code !== 0) throw new GitError(args, cwd, r);
  return r.stdout.replace(/\n$/, '');
}

export interface StreamResult {
  code: number | null;
  /** True when `onChunk` asked to stop and git was ended early. */
  stopped: boolean;
  stderr: string;
}

/** Stderr kept of a streamed command: enough for its error message. */
const STDERR_KEEP = 64 * 1024;

/**
 * Runs git in `cwd` handing its stdout to `onChunk` as it comes, never
 * holding all of it: for output that can be any size (a diff of a 150 MB
 * file). `onChunk` returning false ends git there (SIGTERM; it spawns no
 * children with --no-ext-diff and --no-textconv).
 */
export function gitStream(
  cwd: string,
  args: string[],
  onChunk: (chunk: Buffer) => boolean,
  o: GitOptions = {},
): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', argv(cwd, args, o), {
      cwd,
      env: gitEnv(o.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stopped = false;
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      if (stopped) return;
      if (!onChunk(d)) {
        stopped = true;
        child.stdout.destroy();
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < STDERR_KEEP) stderr += d.toString('utf8');
    });
    child.on('error', (e) => reject(spawnError(e, cwd, args)));
    child.stdin.on('error', () => {});
    child.stdin.end(o.input ?? '');
    child.on('close', (code) => resolve({ code, stopped, stderr }));
  });
}

/**
 * Runs git synchronously, for the few callers that must answer before
 * anything async can run (finding the repository for a command, the demo's
 * setup, doctor's version check). Same clean environment as gitRaw unless
 * `keepGitEnv` (finding the user's repository must honour their GIT_DIR);
 * throws the spawn error (ENOENT: no git) as is.
 */
export function gitSync(
  cwd: string | undefined,
  args: string[],
  o: { env?: NodeJS.ProcessEnv; keepGitEnv?: boolean } = {},
): GitResult {
  const r = spawnSync('git', ['-c', 'core.quotepath=off', '--no-pager', ...args], {
    cwd,
    env: o.keepGitEnv ? { ...process.env, LC_ALL: 'C', ...o.env } : gitEnv(o.env),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The work tree's top level containing `cwd` as the user's git sees it (their
 * GIT_DIR / GIT_WORK_TREE honoured), or null outside one; ENOENT (no git) is thrown.
 */
export function repoRootSync(cwd: string): string | null {
  const r = gitSync(cwd, ['rev-parse', '--show-toplevel'], { keepGitEnv: true });
  return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null;
}
