// The shared store's copy of this process's job logs: when the store is
// shared (PostgreSQL), the command that runs a job installs a LogShipper
// here, and every event appended to a job's events.jsonl in this process
// (the runner's, its launch's, its journal's) goes to it as well, and every
// transcript the runner records (runner.ts hands the recorder its sink).
// None installed (SQLite, tests): the files alone, as before.
import type { LogShipper } from './log-shipper.js';

let current: LogShipper | null = null;

export function setLogMirror(shipper: LogShipper | null): void {
  current = shipper;
}

export function logMirror(): LogShipper | null {
  return current;
}
