// What a landing takes and what it reports, apart from the flow
// (landing.ts) so its parts (resolve-conflicts.ts, tip-tests.ts) name them
// without importing the flow back.
import type { JobDeps } from '../job/launch.js';
import type { Config } from '../model/config.js';
import type { Job, JobLanded, TestResult } from '../model/job.js';
import type { AsyncStateStore } from '../state/async-api.js';
import type { LandingVcs } from '../vcs/landing-vcs.js';
import type { Vcs } from '../vcs/vcs.js';

/** Times the target may move under a landing before it gives up (each time: rebase and test again). */
export const LAND_ATTEMPTS = 3;

export interface LandInput {
  store: AsyncStateStore;
  stateDir: string;
  repo: { root: string; slug: string };
  config: Config;
  /** A completed job (store.jobs.resolve gives one). */
  job: Job;
  /** --onto; else [land] onto; else the job's base branch; else the checked-out branch. */
  onto?: string;
  /** False: --no-test, the rebased tip is not tested (recorded as tested: false). */
  test?: boolean;
  /** Aborting ends a running test command's process group; nothing is moved. */
  signal?: AbortSignal;
  /** The tip's setup and tests run with their nice value raised by this much (ii run --land: [run] nice, as its jobs' tests). */
  nice?: number;
  onProgress?: (p: LandProgress) => void;
  /** Bounds the rebase-and-test rounds when the target keeps moving (default LAND_ATTEMPTS). */
  maxAttempts?: number;
  /** What a conflicting rebase does (default [land] on-conflict). */
  onConflict?: 'agent' | 'stop';
  /** Landing's git steps, and the job's workspace removed once its work landed (a GitVcs from the composition). */
  vcs: LandingVcs & Pick<Vcs, 'removeWorkspace' | 'missingCommits' | 'fetchChangeRefs'>;
  /**
   * What runs the agent's resolution change (on-conflict = "agent"), loaded
   * only when a conflict goes to the agent (it loads the agent's SDK).
   */
  deps?: () => Promise<JobDeps>;
  /** Resolution changes this landing already made (bounds them). */
  resolutions?: number;
}

/** Resolution changes one landing may make before it gives up (the target keeps conflicting). */
export const RESOLUTION_ROUNDS = 2;

/** What a landing reports as it goes (the CLI prints it; the dashboard shows it live). */
export type LandProgress =
  | { type: 'target'; onto: string; tip: string; commits: number; note: string | null }
  | { type: 'rebased'; attempt: number; onto_tip: string; head: string }
  | { type: 'setup'; command: string }
  | { type: 'test_start'; command: string }
  | { type: 'test_output'; command: string; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'test_end'; result: TestResult }
  | { type: 'tests_skipped' }
  /** The target moved while this landing worked: rebase and test again. */
  | { type: 'target_moved'; attempt: number; tip: string }
  | { type: 'checkout_updated'; path: string }
  | { type: 'landed'; landed: JobLanded }
  /** The rebase conflicted: the job goes on with a resolve-conflicts change. */
  | { type: 'resolving'; files: string[]; onto: string }
  /** A stage of the resolution change (the job's own events say more). */
  | { type: 'resolution_stage'; stage: string }
  | { type: 'resolved'; status: string; reason: string | null };

export interface LandResult {
  job: Job;
  landed: JobLanded;
  /** The landed commits, oldest first (the rebased ones). */
  commits: string[];
  /** Said when the target was a guess (an older job with no recorded base branch). */
  note: string | null;
  attempts: number;
  /** The checkouts whose files were fast-forwarded. */
  checkouts: string[];
}
