// The marks a process wrote to an II_TRACE file (src/proc/trace.ts), for tests
// that check which steps a runner went through and at what priority.
import { existsSync, readFileSync } from 'node:fs';

export interface TraceMark {
  pid: number;
  mark: string;
  nice: number;
  session_nice: number | null;
}

/** The marks in `file`, oldest first, of process `pid` only when given; none when there is no file yet. */
export function traceMarks(file: string, pid?: number): TraceMark[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TraceMark)
    .filter((m) => pid === undefined || m.pid === pid);
}
