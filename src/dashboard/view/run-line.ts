// The header's word on the backlog: whether a runner runs it, how full its
// slots are, and how much is ready or blocked (`run: 2/3 slots · 5 ready ·
// 1 blocked`). Pure, from the store's state.
import { takesRunnerSlot } from '../../model/backlog-runner.js';
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
  // Each runner counts the live jobs on its own machine against its slots
  // (a job recorded without a host, from before hosts were kept, counts
  // wherever one runs: takesRunnerSlot, as the scheduler counts); jobs on a
  // machine with no runner take none.
  const hosts = s.runner.hosts ?? [];
  const onRunnerHost = (host: string | null): boolean =>
    hosts.length === 0 || hosts.some((h) => takesRunnerSlot(host, h.host));
  const live = s.jobs.filter((j) => j.status === 'active' && !s.stale[j.id]);
  const running = live.filter((j) => onRunnerHost(j.host)).length;
  const elsewhere = live.length - running;
  const total = hosts.length > 1 ? hosts.reduce((n, h) => n + h.slots, 0) : s.runner.slots;
  const slots = `${running}/${total}`;
  const where =
    (hosts.length > 1 ? ` on ${hosts.length} machines` : '') +
    (elsewhere ? ` (+${elsewhere} elsewhere)` : '');
  return { full: `run: ${slots} slots${where}${counts}`, short: `run: ${slots}` };
}
