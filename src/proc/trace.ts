// Timestamps of a job's way from `ii run`'s hand-over to its first prompt,
// for bench/handover.bench.js: with II_TRACE naming a file, each mark is one
// JSON line appended to it ({t, pid, mark, cpu, ...}), written by whichever
// process passes it (ii run, the previous job's runner, the next one). The
// job's own records say when it ended, claimed and prompted; these say where
// the time between went (config, checks, the agent's spawn, ACP's start).
// Unset, a mark costs one property read.
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { resolve } from 'node:path';
import { sessionNice } from './priority.js';

// Resolved once, where first read, and handed on absolute to every child (the
// runners, the agents' wrappers), which run in other directories: a relative
// path would scatter their marks over each one's cwd.
const file = process.env.II_TRACE?.trim() ? resolve(process.env.II_TRACE.trim()) : null;
if (file !== null) process.env.II_TRACE = file;

/** Whether marks are written (II_TRACE is set). */
export const tracing = file !== null;

/**
 * Appends one mark: wall clock (ms since the epoch, sub-ms), this process's
 * CPU time so far (ms), how long its main thread has waited for a core so
 * far (ms; null without /proc), its nice value and its session's, and
 * `extra`. A step's wall clock less its CPU and its wait for a core is what
 * it waited on something else: a child process, the disk, a lock.
 */
export function mark(name: string, extra: Record<string, string | number | null> = {}): void {
  if (file === null) return;
  const cpu = process.cpuUsage();
  const line = JSON.stringify({
    t: performance.timeOrigin + performance.now(),
    // The monotonic clock (µs) a CPU profile's samples are timed on (--cpu-prof): a step's samples, by its marks.
    mono: Number(process.hrtime.bigint() / 1000n),
    pid: process.pid,
    mark: name,
    cpu: (cpu.user + cpu.system) / 1000,
    core_wait: coreWaitMs(),
    nice: getPriority(),
    // Where each session is scheduled as one (Linux's autogroup), what it weighs against the others.
    session_nice: sessionNice(),
    ...extra,
  });
  try {
    appendFileSync(file, `${line}\n`);
  } catch {} // a bench's file gone: the job goes on
}

/** The time (ms) this process's main thread has waited on a run queue for a core (Linux's schedstat, field 2), or null. */
function coreWaitMs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return null;
  }
}

/**
 * The CPU time (ms) process `pid` and its descendants have run so far, from
 * Linux's /proc (schedstat: nanoseconds; children: each thread's children);
 * null elsewhere. For a mark's extra: the agent's own start, which runs in
 * processes of its own (bwrap, then the agent). Only when tracing.
 */
export function treeCpuMs(pid: number | undefined): number | null {
  if (!tracing || pid === undefined) return null;
  let ns = 0;
  const todo = [pid];
  for (let p = todo.pop(); p !== undefined; p = todo.pop()) {
    try {
      ns += Number(readFileSync(`/proc/${p}/schedstat`, 'utf8').split(' ')[0]);
      for (const t of readdirSync(`/proc/${p}/task`))
        for (const c of readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').split(' '))
          if (c.trim()) todo.push(Number(c));
    } catch {
      if (p === pid) return null; // no /proc, or the process is gone; a child gone meanwhile is skipped
    }
  }
  return ns / 1e6;
}
