// Starting `ii` as a detached background process: its own process group (a
// Ctrl-C or SIGKILL of whoever started it never reaches it), the same state
// dir, stdout and stderr appended to a log file. The dashboard's retry and
// the backlog runner (`ii run`) start their job runners this way, so a
// job's runner outlives its starter.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { getPriority } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { iiBin } from '../package-root.js';
import { MAX_NICE } from '../model/nice.js';
import { BOOT_LOW_MS, niceSession, setSessionNice, startNiced } from '../proc/priority.js';
import { jobDir } from '../state/paths.js';

export interface Detached {
  pid: number;
  log: string;
  /** The child; its 'exit' fires while the starter lives. Already unref'd. */
  child: ChildProcess;
}

/**
 * Node flags of every runner started in the background (ii run, the board).
 * A runner spends its life waiting on its agent, yet V8's default young
 * generation (16 MB semi-spaces) stays committed once used: 2 MB semi-spaces
 * took an idle concurrent job from 39.4 to 34.0 MB of private memory
 * (bench/scale.bench.js), against a goal of 40 MB.
 */
export const RUNNER_NODE_ARGS = ['--max-semi-space-size=2'];

/**
 * Runs `ii <args>` in `repoRoot`, detached, logging to `log`. Returns at once.
 * With stdin 'pipe' the child reads what the starter writes (its stdin is
 * then unref'd too: it keeps no starter alive). `nice`: its nice value is
 * raised by that much from its start (startNiced), and its session's with it
 * unless `sessionNice` gives the session another.
 */
export function spawnDetachedIi(
  args: string[],
  repoRoot: string,
  stateDir: string,
  log: string,
  stdin: 'ignore' | 'pipe' = 'ignore',
  nice = 0,
  sessionNice?: number,
  back = false,
): Detached {
  mkdirSync(dirname(log), { recursive: true, mode: 0o700 });
  const fd = openSync(log, 'a', 0o600);
  try {
    // The state dir is $XDG_STATE_HOME/incrementum: hand the same one down.
    const env = { ...process.env };
    if (basename(stateDir) === 'incrementum') env.XDG_STATE_HOME = dirname(stateDir);
    const argv = [process.execPath, ...RUNNER_NODE_ARGS, iiBin(), ...args];
    const start = (cmd: string[]) =>
      spawn(cmd[0]!, cmd.slice(1), {
        cwd: repoRoot,
        env,
        detached: true,
        // With `back`: BACK_FD, on which a standby says it came back (spawnStandbyJob).
        stdio: back ? [stdin, fd, fd, 'pipe'] : [stdin, fd, fd],
      });
    let child = start(startNiced(argv, nice));
    if (child.pid === undefined && nice > 0) {
      // No nice(1) on this PATH: the job runs at its starter's priority rather than not at all.
      child.on('error', () => {});
      writeSync(fd, `ii: nice(1) could not be started, so this runner runs at ii run's own priority\n`);
      child = start(argv);
    }
    child.on('error', () => {});
    // Its session (detached: setsid) is lowered with it where sessions are scheduled as one.
    // Written once, here, or not at all: the child changes it from then on (see spawnStandbyJob).
    if (sessionNice !== undefined && child.pid !== undefined) setSessionNice(child.pid, sessionNice, false);
    else if (nice > 0) niceSession(child.pid, getPriority() + nice);
    child.unref();
    if (child.stdin) {
      child.stdin.on('error', () => {}); // a standby gone: its exit says so
      (child.stdin as unknown as { unref?: () => void }).unref?.();
    }
    const backPipe = child.stdio[BACK_FD] as
      (NodeJS.ReadableStream & { unref?: () => void }) | null | undefined;
    if (backPipe) {
      backPipe.on('error', () => {});
      backPipe.unref?.();
    }
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

/** What ii run passes to each of its job runners. */
export interface BacklogJobOptions {
  /** --agent. */
  agent?: string;
  /** --rev: the branch ii run started from, so a checkout switched meanwhile changes no job's base. */
  rev?: string;
  /** ii run --land: the job is recorded as to land when it claims its todo (--to-land). */
  toLand?: boolean;
  /** [run] nice: the runner starts with its nice value raised by this (0 or unset: as ii run). */
  nice?: number;
  /**
   * Started together with other jobs (a run's first jobs, say): a cold
   * runner's start is at the floor (--boot-low, proc/priority.ts bootLow).
   * One start alone is not: its start shares the cores with no other, and at
   * the floor beside a person's busy work it waited the whole BOOT_LOW_MS.
   */
  bootLow?: boolean;
}

const jobArgs = (o: BacklogJobOptions): string[] => [
  ...(o.agent ? ['--agent', o.agent] : []),
  ...(o.rev ? ['--rev', o.rev] : []),
  ...(o.toLand ? ['--to-land'] : []),
];

/**
 * Starts a detached job runner for a todo of the backlog: `ii job do <todo>
 * --backlog`, which claims the todo only while it is ready (exiting with
 * CLAIM_LOST_EXIT otherwise) and runs the job to its end.
 */
export function spawnBacklogJob(
  todoId: string,
  repo: { root: string; slug: string },
  stateDir: string,
  o: BacklogJobOptions = {},
): Detached {
  const log = join(stateDir, 'runs', repo.slug, `${stamp()}-${todoId}.log`);
  const args = ['job', 'do', todoId, '--backlog', '--no-edit', ...jobArgs(o)];
  if (!o.nice || !o.bootLow) return spawnDetachedIi(args, repo.root, stateDir, log, 'ignore', o.nice);
  args.push('--boot-low');
  // Its start at the floor (proc/priority.ts bootLow), from its first
  // instruction: Node's own start and the loading of its code come before
  // the runner can lower itself. Raised here BOOT_LOW_MS after the spawn at
  // the latest, should the runner be too starved to do it itself by then
  // (beside a person's busy work, its load alone took seconds at the floor).
  const d = spawnDetachedIi(args, repo.root, stateDir, log, 'ignore', o.nice, MAX_NICE);
  const level = getPriority() + o.nice; // setSessionNice caps it at 19
  const raise = setTimeout(() => setSessionNice(d.pid, level, false), BOOT_LOW_MS);
  raise.unref();
  d.child.once('exit', () => clearTimeout(raise));
  return d;
}

/**
 * A job runner started before its todo is known (`ii job do --backlog
 * --standby`): it loads its code and opens the store, then waits for one line
 * on its stdin, the todo id, and from there is the job's runner like any
 * other (it claims the todo, and outlives its starter). It exits at once,
 * having done nothing, when its stdin ends without a todo: dismissed, or its
 * starter gone (even by SIGKILL, the pipe closes), so none is left idle.
 *
 * Its job ended, it may come back (`onBack`) rather than exit: it then waits
 * for another todo as it did for the first, already loaded (a new standby's
 * load was about half of all the CPU a runner used in bench/handover.bench.js,
 * 500 of 1,000 ms a job). It says so on its fd 3, one line `back <code>`
 * (the code it would have exited with), once its job's wrap-up is done.
 */
export interface Standby extends Detached {
  /** Gives it a todo; its log is named after the todo (a runner come back keeps its log, linked under the new name). */
  handOver(todoId: string): Detached;
  /** No todo for it (or none more): it exits, after its job if it runs one. */
  dismiss(): void;
  /** `cb` is called each time its job ended and it waits for another todo, with its job's exit code. */
  onBack(cb: (code: number) => void): void;
}

/**
 * How long a standby's session stays at the floor after its process starts,
 * unless it is handed a todo before: about as long as the start of the job
 * whose hand-over it follows takes, to its first prompt, on a busy 2-core
 * machine (bench/handover.bench.js, --jobs 2).
 */
export const STANDBY_LOW_MS = 400;

/** The fd a standby runner says on that its job ended and it waits for another todo (spawnStandbyJob). */
export const BACK_FD = 3;

export function spawnStandbyJob(
  repo: { root: string; slug: string },
  stateDir: string,
  o: BacklogJobOptions = {},
): Standby {
  const dir = join(stateDir, 'runs', repo.slug);
  const log = join(dir, `${stamp()}-standby-${process.pid}.log`);
  const args = ['job', 'do', '--backlog', '--standby', '--back', '--no-edit', ...jobArgs(o)];
  // Its load (a Node start, the job's modules, the store, the sandbox's
  // probe: about 220 ms of CPU) came as the job handed the standby before it
  // started its agent, on the same cores (bench/handover.bench.js): its
  // session starts at the floor, and is raised to the jobs' level (the
  // standby's own nice value) after STANDBY_LOW_MS or when it is handed a
  // todo. Where Linux schedules each session as one (autogroups) a session's
  // value is what weighs; its owner may raise it back, which a process's own
  // nice value cannot be. ii run's writes here are each tried once: as it
  // spawns the standby, STANDBY_LOW_MS after (counted from the spawn: the
  // standby's own count starts once its code is loaded, later at the floor),
  // and as it hands it a todo (a standby still loading then loads at the
  // jobs' level: it reads its todo only once loaded); none comes after the
  // hand-over, so none undoes a later change. The standby raises it too
  // (cli/job/do.ts), retrying while Linux refuses, even when ii run is gone.
  // A runner come back lowered its session itself for its job's wrap-up,
  // and raises it again as it is handed its next todo.
  const level = getPriority() + (o.nice ?? 0); // setSessionNice caps it at 19
  const d = spawnDetachedIi(args, repo.root, stateDir, log, 'pipe', o.nice, MAX_NICE, true);
  const raise = setTimeout(() => setSessionNice(d.pid, level, false), STANDBY_LOW_MS);
  raise.unref();
  let dismissed = false;
  /** Its log as last named (null before a todo): a runner come back keeps writing there. */
  let named: string | null = null;
  let backs = 0;
  // A standby that ends without a todo leaves no empty log behind.
  d.child.once('exit', () => {
    clearTimeout(raise);
    try {
      if (named === null && statSync(log).size === 0) rmSync(log);
    } catch {}
  });
  const backPipe = d.child.stdio[BACK_FD] as NodeJS.ReadableStream | null | undefined;
  const listeners: ((code: number) => void)[] = [];
  let buf = '';
  backPipe?.on('data', (chunk: Buffer | string) => {
    buf += chunk.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const m = /^back (\d+)$/.exec(line);
      if (!m) continue; // only ours writes here; anything else is not a return
      backs++;
      for (const cb of listeners) cb(Number(m[1]));
    }
  });
  let handedCount = 0;
  return {
    ...d,
    handOver(todoId) {
      if (dismissed) throw new Error('this standby was dismissed');
      if (handedCount > backs) throw new Error('this standby runs a job: it takes another once back');
      handedCount++;
      // Named as a cold runner's log is: the hand-over time and the todo.
      const name = join(dir, `${stamp()}-${todoId}.log`);
      try {
        if (named === null) renameSync(log, name);
        else linkSync(named, name); // the same file, under each todo's name
        named = name;
      } catch {
        named ??= log;
      }
      clearTimeout(raise);
      if (handedCount === 1) setSessionNice(d.pid, level, false);
      d.child.stdin?.write(`${todoId}\n`);
      return { pid: d.pid, log: named, child: d.child };
    },
    dismiss() {
      if (dismissed) return;
      dismissed = true;
      clearTimeout(raise);
      d.child.stdin?.end();
    },
    onBack(cb) {
      listeners.push(cb);
    },
  };
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
