// Processes stepping aside for others on the machine. `ii run` starts its
// job runners at a raised nice value ([run] nice, startNiced): agents, tests
// and git then yield the cores to a person's board, editor and shell, which
// waited for them before (bench/shared-store.bench.js's keypress rows); on
// an idle machine nothing changes, since a nice value only orders processes
// that want the same core. A backlog runner whose job's end is recorded has
// only its wrap-up left (the last iteration's snapshot, the workspace's
// release, the journal), while `ii run` hands its slot to the next job at
// that moment: at the jobs' priority the wrap-up's git and journal took the
// cores the next job's start needed (bench/handover.bench.js), so it steps
// aside further, when it can (at [run] nice 19 the jobs are at the floor
// already). A raised nice value cannot be lowered again without
// privileges, so only a process with nothing urgent left steps aside.
//
// Where Linux groups each session's processes for the scheduler (autogroup,
// /proc/sys/kernel/sched_autogroup_enabled, on by default in many
// distributions), a session competes with the others as one whole, at its
// autogroup's nice value (0 when made), whatever its processes' own: a
// runner, and each agent, setup and test command a runner starts, is a
// session of its own (started detached: setsid), so a raised nice value
// alone lowered nothing against the person's terminal (two busy loops on one
// core, the one at nice 10 in a session of its own: 48 and 47 ticks of CPU;
// with its session at nice 10 too, 7 and 63). A lowered process so gives
// each session it starts its own value (niceSession), and its own session
// too when it steps aside and leads it. A cold runner (no standby was
// ready) started together with others starts its job with all of that at
// the floor (bootLow).
import { readFileSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { MAX_NICE } from '../model/nice.js';
import { startTicks } from './group.js';

/** A start at the floor (bootLow): the jobs' level, and the sessions started meanwhile with their leaders' starts. */
let booting: { level: number; sessions: Map<number, number>; timer: NodeJS.Timeout } | null = null;

/** How much the nice value is raised: below the jobs that run (at most 19, the floor, from [run] nice 10). */
export const STEP_ASIDE_NICE = 10;

/**
 * Raises this process's nice value by STEP_ASIDE_NICE (at most 19); the git it
 * starts from now inherits it. False if refused. With `own` false only its
 * session's value (autogroup) is raised, which it may lower again: a runner
 * that comes back for another job (cli/job/do.ts standby).
 */
export function stepAside(own = true): boolean {
  // A start at the floor not ended yet (no prompt came) is not raised again.
  if (booting) clearTimeout(booting.timer);
  booting = null;
  try {
    const nice = Math.min(19, getPriority() + STEP_ASIDE_NICE);
    if (own) setPriority(nice);
    // Only a session of its own (ii run's runner): run by hand, the session
    // is the person's terminal, which must not be lowered with it.
    setOwnSessionNice(nice);
    return true;
  } catch {
    return false; // not allowed here: it just competes as before
  }
}

/** Whether this process leads its session (field 6 of /proc/self/stat, after the name in parentheses). */
function leadsSession(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]) === process.pid;
  } catch {
    return false; // no /proc: no autogroups either
  }
}

/** This process's session's autogroup nice value, or null where there are no autogroups. */
export function sessionNice(): number | null {
  try {
    const m = /nice (-?\d+)/.exec(readFileSync('/proc/self/autogroup', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Linux takes one autogroup change a tenth of a second, machine-wide, from a
 * process without CAP_SYS_ADMIN (any person's own), and refuses the others
 * with EAGAIN: `ii run --jobs 8` starts several sessions at once, and all but
 * the first stayed at nice 0 (only root's were all lowered, as in the
 * benches). A refused change is tried again after this long, plus as much
 * again at random so that runners starting together do not keep colliding.
 */
const SESSION_RETRY_MS = 100;

/**
 * How long a refused change is retried: one still refused by then is left as
 * it is (the machine changes sessions faster than Linux takes them), rather
 * than made so late that it could undo a later change made by another process
 * (a runner's own step aside, after its starter raised its session).
 */
const SESSION_RETRY_FOR_MS = 10_000;

/**
 * Gives the session `pid` leads (a child just started detached, which Node
 * starts with setsid) the autogroup nice value `nice`, by default this
 * process's own (nothing at 0), so that a lowered process's sessions are
 * lowered with it. Nothing where there are no autogroups; never throws.
 */
export function niceSession(pid: number | undefined, nice = getPriority()): void {
  if (pid === undefined || nice <= 0) return;
  const boot = booting;
  if (boot && nice === boot.level && nice < MAX_NICE) {
    const start = startTicks(pid);
    if (start !== null) boot.sessions.set(pid, start);
    return setSessionNice(pid, MAX_NICE);
  }
  setSessionNice(pid, nice);
}

/**
 * The longest a job's start stays at the floor (bootLow) when its first
 * prompt is late: its setup or baseline tests may take minutes, which must
 * not crawl beside a person's busy work.
 */
export const BOOT_LOW_MS = 3000;

/**
 * A cold runner of ii run's (one not started ahead as a standby) started
 * together with others (--boot-low) starts its job at the floor: its own
 * session and each session it starts (the agent, setup, the baseline tests)
 * at 19, raised to its own nice value, the jobs' level, at the job's first
 * prompt (endBootLow) or after BOOT_LOW_MS. When ii run starts its jobs
 * together, their starts (each a Node start, a workspace, tests and an
 * agent's start, all wanting the cores at once) took the cores from a
 * person's board: each session at the jobs' level weighs a tenth of the
 * board's, and 24 starting jobs' sessions outweighed it several times over
 * (bench/shared-store.bench.js, keypress → frame). At the floor
 * they weigh a sixty-eighth; they still share the cores among themselves as
 * before, and at the jobs' level from the first prompt on they keep their
 * share beside a person's busy work. A start alone is not at the floor: it
 * has no other to share with, and beside a person's busy work it waited the
 * whole BOOT_LOW_MS (test/e2e/run-land-stress.test.ts, every job started
 * alone: 83-112 s, 138-143 s with them at the floor). Nothing for a process
 * at nice 0 (its jobs run at the caller's priority) or at the floor already.
 */
export function bootLow(): void {
  const level = getPriority();
  if (booting || level <= 0 || level >= MAX_NICE) return;
  // Counted from the process's start, as ii run counts it (job/detached.ts spawnBacklogJob).
  const timer = setTimeout(endBootLow, Math.max(0, BOOT_LOW_MS - process.uptime() * 1000));
  timer.unref();
  booting = { level, sessions: new Map(), timer };
  setOwnSessionNice(MAX_NICE);
}

/** Ends bootLow's start at the floor: this process's session and those it started meanwhile back at the jobs' level. */
export function endBootLow(): void {
  const boot = booting;
  if (!boot) return;
  booting = null;
  clearTimeout(boot.timer);
  setOwnSessionNice(boot.level);
  // Only a leader still running as the one started (a pid may come back as another process).
  for (const [pid, start] of boot.sessions) if (startTicks(pid) === start) setSessionNice(pid, boot.level);
}

/**
 * Session leaders whose change the kernel refused, each with the value last
 * asked for (the retry writes that one) and the leader's start, which tells
 * it from a later process given the same pid.
 */
const refused = new Map<number, { value: string; start: number }>();

/**
 * Gives the session `pid` leads the autogroup nice value `nice`, 0 to 19:
 * unlike a process's own nice value, its owner may lower a session's and
 * raise it again within that range (a standby runner's, see detached.ts). At
 * once where the kernel allows it, else (unless `retry` is false) as soon as
 * it does, within SESSION_RETRY_FOR_MS and while that leader lives, the last
 * value this process asked for winning: a session's values should all come
 * from one process, since another's retry could land after them. The
 * retries keep no process alive. Nothing where there are no autogroups;
 * never throws.
 */
export function setSessionNice(pid: number, nice: number, retry = true): void {
  const value = String(Math.max(0, Math.min(19, nice)));
  const waiting = refused.get(pid);
  if (waiting && waiting.start === startTicks(pid)) {
    waiting.value = value; // the retry under way writes it
    return;
  }
  refused.delete(pid); // a retry for an earlier process of that pid, which is gone
  if (writeSessionNice(pid, value) || !retry) return;
  // Taken now, while the child cannot have been reaped yet: a retry never
  // writes to another process given the same pid since.
  const start = startTicks(pid);
  if (start === null) return;
  const entry = { value, start };
  refused.set(pid, entry);
  const until = performance.now() + SESSION_RETRY_FOR_MS;
  const again = () => {
    if (refused.get(pid) !== entry) return; // replaced: a later process of that pid
    if (startTicks(pid) === start && !writeSessionNice(pid, entry.value) && performance.now() < until)
      return void setTimeout(again, SESSION_RETRY_MS * (1 + Math.random())).unref();
    refused.delete(pid);
  };
  setTimeout(again, SESSION_RETRY_MS * (1 + Math.random())).unref();
}

/**
 * Writes the autogroup nice value of the session `pid` leads: false only when
 * Linux refused it for now (EAGAIN), true when written or when it cannot be
 * (no autogroups on this system or kernel, or the leader is gone already).
 */
function writeSessionNice(pid: number, value: string): boolean {
  try {
    writeFileSync(`/proc/${pid}/autogroup`, value);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'EAGAIN';
  }
}

/**
 * Gives this process's own session the autogroup nice value `nice`, when it
 * leads one (a runner ii run started): run by hand, the session is the
 * person's terminal, whose value is not ii's to change.
 */
export function setOwnSessionNice(nice: number): void {
  if (leadsSession()) setSessionNice(process.pid, nice);
}

/**
 * The argv that runs `argv` with its nice value raised by `by` (nice(1),
 * which the kernel caps at 19), or `argv` itself for 0. Raised before the
 * program starts, the whole process is lowered (every thread Node starts;
 * setpriority(2) on a running Node lowers only the calling thread on Linux)
 * and everything it starts inherits it.
 */
export function startNiced(argv: readonly string[], by: number): string[] {
  return by > 0 ? ['nice', '-n', String(by), ...argv] : [...argv];
}
