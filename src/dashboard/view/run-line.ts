// The header's word on the backlog: whether a runner runs it, how full its
// slots are, and how much is ready or blocked (`run: 2/3 slots · 5 ready ·
// 1 blocked`). Pure, from the store's state.
import type { DashboardState } from './state.js';

/** The runner's state in full and in a short form for a narrow header; null when there is nothing to say. */
export function runLine(
  s: Pick<DashboardState, 'jobs' | 'stale' | 'backlog' | 'runner'>,
): { full: string; short: string } | null {
  const ready = s.backlog.ready.length;
  const blocked = s.backlog.blocked.length;
  if (!s.runner && ready + blocked === 0) return null;
  const counts = ` · ${ready} ready · ${blocked} blocked`;
  if (!s.runner) return { full: `run: off${counts}`, short: 'run: off' };
  // The runner counts every live job of the repository against its slots.
  const running = s.jobs.filter((j) => j.status === 'active' && !s.stale[j.id]).length;
  const slots = `${running}/${s.runner.slots}`;
  return { full: `run: ${slots} slots${counts}`, short: `run: ${slots}` };
}
