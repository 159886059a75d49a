// A backlog runner (`ii run`) as the store records it, so the board can show
// and steer it: how many jobs it may run at once (slots, which `+`/`-` change
// while it runs) and whether its process is still there.

export interface BacklogRunnerRecord {
  id: number;
  repo: string;
  pid: number;
  host: string;
  /** Jobs of the repository it keeps running at once; read again before each start. */
  slots: number;
  /** Started with --watch: waits for new todos instead of ending. */
  watch: boolean;
  started_at: string;
  heartbeat_at: string;
  /** Todos it has started a job runner for that has not claimed yet: no other run starts one for them. */
  starting: string[];
  /** Started with --land: lands each job as it completes, so a todo waits for its deps to land. */
  lands: boolean;
}

/** A runner whose process is gone (same host: its pid; elsewhere: no heartbeat for this long) is not running. */
export const RUNNER_STALE_AFTER_MS = 30_000;

/** Whether a recorded runner is still running. */
export function runnerAlive(
  r: Pick<BacklogRunnerRecord, 'pid' | 'host' | 'heartbeat_at'>,
  now: number,
  probe: { host: string; pidAlive: (pid: number) => boolean },
): boolean {
  if (r.host === probe.host) return probe.pidAlive(r.pid);
  const beat = Date.parse(r.heartbeat_at);
  return Number.isFinite(beat) && now - beat <= RUNNER_STALE_AFTER_MS;
}

/**
 * Whether the backlog is run landing (BacklogOptions.depsLanded) by the live
 * runners: true when every one lands (a dependent waits for its deps'
 * landing), false when one does not (that one starts a todo once its deps
 * completed), null when none runs (nothing decides yet: the board shows a
 * todo ready, saying which of its deps have not landed).
 */
export function runnersLand(live: readonly Pick<BacklogRunnerRecord, 'lands'>[]): boolean | null {
  return live.length ? live.every((r) => r.lands) : null;
}

/**
 * Whether a live job recorded on `jobHost` takes a slot of a runner on
 * `runnerHost`: its own machine's jobs do, and a job recorded with no host
 * (an older build's, still running across an upgrade) does wherever a runner
 * runs, as its machine cannot be told. The scheduler (backlog/scheduler.ts)
 * and the board's header (dashboard/view/run-line.ts) both count by this:
 * the scheduler counted such a job on no machine while the board counted it
 * on every runner's, so a run started one job more than the board showed room for.
 */
export function takesRunnerSlot(jobHost: string | null, runnerHost: string): boolean {
  return jobHost === null || jobHost === runnerHost;
}
