// The shared store's copy of this process's job logs: when the store is
// shared (PostgreSQL), every command that opens it (cli/context.ts
// withStore, and the dashboard, cli/dashboard/run.ts)
// installs a LogShipper here, and the command that runs a job its own for
// the job's length; every event appended to a job's events.jsonl
// in this process (the runner's, a landing's, an abandon's, a dead runner's
// cleanup) goes to it as well, and every transcript the runner records
// (runner.ts hands the recorder its sink).
// None installed (SQLite, tests): the files alone, as before.
import type { LogShipper } from './log-shipper.js';

let current: LogShipper | null = null;

export function setLogMirror(shipper: LogShipper | null): void {
  current = shipper;
}

export function logMirror(): LogShipper | null {
  return current;
}
