// The merge queue of a landing runner (ii run --land): the jobs that are to
// land (model/job.ts to_land: started by a landing runner, this one or one
// that was killed) are landed one at a time, oldest completion first, so
// jobs stack up on the branch instead of racing for it, and the branch gets
// the history the killed runner would have given it. Each landing is
// landJob's, which takes the job in the store first: two landing runners, or
// one and a person's ii job land, never land one job twice.
import { hostName } from '../proc/host.js';
import type { Config } from '../model/config.js';
import { landingUnderWay } from '../model/derive.js';
import type { Job, JobLanded } from '../model/job.js';
import { localProbe } from '../proc/alive.js';
import type { AsyncStateStore } from '../state/async-api.js';
import type { JobDeps } from '../job/launch.js';
import { finalCommit, LandRefused, landJob, type LandInput } from './landing.js';

/** The jobs of a repository that are to land, as a landing runner sees them now. */
export interface ToLand {
  /** Landable now, oldest completion first. */
  ready: Job[];
  /** Completed, but their runner is still finishing (releasing the workspace, writing the journal). */
  finishing: Job[];
  /** Their last landing was refused (or stopped in a conflict): not tried again until a person does. */
  refused: Job[];
  /** Another live process is landing them. */
  elsewhere: Job[];
}

type Probe = { host: string; pidAlive: (pid: number) => boolean };

/** Oldest completion first; the id breaks ties, so the order is the same every time. */
export const byCompletion = (a: Job, b: Job) =>
  (a.completed_at ?? '').localeCompare(b.completed_at ?? '') || a.id.localeCompare(b.id);

/**
 * How long after its completion a job's runner is waited for. It takes
 * seconds; past this its pid is taken to be another process's (pids are
 * reused), so a landing runner never waits on it for good.
 */
export const FINISHING_MS = 120_000;

/** Sorts the repository's jobs to land by what a landing runner can do with each now. */
export async function toLand(
  store: AsyncStateStore,
  repo: string,
  probe: Probe = localProbe,
  now = Date.now(),
): Promise<ToLand> {
  const out: ToLand = { ready: [], finishing: [], refused: [], elsewhere: [] };
  const recent = (job: Job) => now - Date.parse(job.completed_at ?? '') < FINISHING_MS;
  for (const job of (await store.jobs.toLand(repo)).sort(byCompletion)) {
    if (job.land_conflict || job.landing?.state === 'refused') out.refused.push(job);
    else if (landingUnderWay(job.landing, probe) && job.landing?.pid !== process.pid) out.elsewhere.push(job);
    // Its runner lands nothing itself, but is still at the job's end: landing
    // now would find its workspace not yet released, and keep it.
    else if (
      job.host === probe.host &&
      job.pid != null &&
      job.pid !== process.pid &&
      recent(job) &&
      probe.pidAlive(job.pid)
    )
      out.finishing.push(job);
    else out.ready.push(job);
  }
  return out;
}

export interface LandQueueOptions {
  store: AsyncStateStore;
  repo: { root: string; slug: string };
  config: Config;
  /** Landing's git, as landJob takes it. */
  vcs: LandInput['vcs'];
  /** The collaborators of a conflict's resolution by the agent, as landJob takes them. */
  deps?: () => Promise<JobDeps>;
  /** Said the moment the landing is recorded (before the workspace is released and the journal written). */
  onLanded?: (jobId: string, landed: JobLanded) => void;
  /** Not landed: why (the refusal's message; it is recorded on the job as well). */
  onRefused?: (jobId: string, message: string, err: unknown) => void;
  /** Completed with no commits: nothing to land. */
  onNothing?: (jobId: string) => void;
  /** Each landing's setup and tests run with their nice value raised by this much (ii run --land: [run] nice). */
  nice?: number;
}

/** How often a landing runner looks whether an older job's landing elsewhere ended. */
const OLDER_POLL_MS = 200;

export class LandQueue {
  private readonly o: LandQueueOptions;
  /** Every job this queue was given: none is queued twice. */
  private readonly seen = new Set<string>();
  private readonly queued = new Map<string, Job>();
  private running: Promise<void> | null = null;
  readonly landed: string[] = [];
  readonly notLanded: string[] = [];

  constructor(o: LandQueueOptions) {
    this.o = o;
  }

  /** Queues a completed job (once; a job given again is ignored). */
  add(job: Job): void {
    if (this.seen.has(job.id)) return;
    this.seen.add(job.id);
    this.queued.set(job.id, job);
    // Cleared in a .finally, which runs after this assignment whatever drain does.
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  /** Landings queued or under way. */
  get pending(): number {
    return this.queued.size + (this.running ? 1 : 0);
  }

  /** Resolves once nothing is queued or landing. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      // The oldest completion of those queued now: a job queued while
      // another landed may have completed first.
      const next = [...this.queued.values()].sort(byCompletion)[0];
      if (!next) return;
      this.queued.delete(next.id);
      await this.olderLanded(next);
      await this.landOne(next.id);
    }
  }

  /**
   * Waits while a job that completed before `next` is being landed by
   * another process (another ii run --land took it first): the branch takes
   * the jobs in completion order whichever landing runner lands each. Ends
   * when that landing lands, is refused, or its process dies; one recorded
   * on another host, which cannot be probed from here, is not waited for.
   */
  private async olderLanded(next: Job): Promise<void> {
    const { store, repo } = this.o;
    const older = (j: Job) => byCompletion(j, next) < 0 && j.landing?.host === localProbe.host;
    while ((await toLand(store, repo.slug)).elsewhere.some(older))
      await new Promise((r) => setTimeout(r, OLDER_POLL_MS));
  }

  private async landOne(jobId: string): Promise<void> {
    const { store, repo, config, vcs, deps } = this.o;
    const job = await store.jobs.get(jobId);
    if (!job || job.landed) return;
    if (!finalCommit(job)) {
      this.o.onNothing?.(jobId);
      return;
    }
    try {
      let said = false;
      const r = await landJob({
        store,
        stateDir: store.dir,
        repo,
        config,
        job,
        vcs,
        ...(deps ? { deps } : {}),
        ...(this.o.nice ? { nice: this.o.nice } : {}),
        onProgress: (p) => {
          if (p.type !== 'landed') return;
          said = true;
          this.o.onLanded?.(jobId, p.landed);
        },
      });
      this.landed.push(jobId);
      if (!said) this.o.onLanded?.(jobId, r.landed);
    } catch (err) {
      // Another process lands it (or has): not ours to count.
      if (err instanceof LandRefused && err.kind === 'busy') return;
      const now = await store.jobs.get(jobId);
      if (now?.landed) return;
      const message = (err as Error).message;
      // landJob records every other refusal; this one too, so no later
      // landing runner tries it again (to_land stays, with the reason).
      if (err instanceof LandRefused && err.kind === 'not-landable' && now)
        await store.jobs.setLanding(jobId, {
          state: 'refused',
          onto: now.base_branch ?? '',
          step: message.split('\n', 1)[0] ?? '',
          at: new Date().toISOString(),
          pid: process.pid,
          host: hostName(),
        });
      this.notLanded.push(jobId);
      this.o.onRefused?.(jobId, message, err);
    }
  }
}
