// An agent runs in its own process group (spawned detached), so stopping it
// reaches everything it started: language servers, shells, MCP helpers. Agents
// in the field ignore EOF and sometimes SIGTERM, hence the escalation.
import type { ChildProcess } from 'node:child_process';
import { groupAlive, isOurGroup, signalGroup } from '../proc/group.js';

export { groupAlive, signalGroup };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitGone(pid: number, child: ChildProcess, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  // The leader must have exited (and been reaped by us) and nothing else of
  // its group may remain; poll because children of the leader are not ours.
  while (Date.now() < end) {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (!groupAlive(pid)) return true;
    }
    await sleep(20);
  }
  return (child.exitCode !== null || child.signalCode !== null) && !groupAlive(pid);
}

export interface StopGrace {
  /** Time to exit on its own after stdin closes. */
  eofMs: number;
  /** Time between SIGTERM and SIGKILL. */
  termMs: number;
}

/**
 * Close stdin, wait, SIGTERM the group, wait, SIGKILL the group. Resolves when
 * no process of the group remains (or after SIGKILL, which cannot be refused).
 * `leaderStart` is the child's start time (startTicks) taken at spawn: a
 * group that is no longer provably ours is never signalled (see isOurGroup).
 */
export async function stopGroup(
  child: ChildProcess,
  grace: StopGrace,
  leaderStart: number | null,
): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  child.stdin?.end();
  if (await waitGone(pid, child, grace.eofMs)) return;
  if (!isOurGroup(pid, leaderStart)) return;
  signalGroup(pid, 'SIGTERM');
  if (await waitGone(pid, child, grace.termMs)) return;
  if (!isOurGroup(pid, leaderStart)) return;
  signalGroup(pid, 'SIGKILL');
  await waitGone(pid, child, 2000);
}
