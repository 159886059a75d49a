// This machine's name as ii records and compares it: a job's host, a runner's
// heartbeat, a landing's or lock's owner, whose pid may be probed here. It is
// the OS's host name unless II_HOST names the machine: several ii "machines"
// can then share one computer (the multi-machine tests, each with its own
// state dir), and clones whose containers all report one host name can be
// told apart. Read in this one place so every comparison agrees.
import { hostname } from 'node:os';

/** II_HOST when set (not blank), else os.hostname(). */
export function hostName(): string {
  const named = process.env.II_HOST?.trim();
  return named ? named : hostname();
}
