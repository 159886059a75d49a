// The dashboard's one store (zustand vanilla): usable from the watcher, the
// key handlers and the components alike. Actions live here, next to the
// state they change; components bind with useStore(store, selector).
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { FileChange, Job } from '../../model/job.js';
import type { BoardJob } from '../../model/job-card.js';
import { redact } from '../../text/redact.js';
import { keepSelection, reduceNav, sanitizeNav, type NavAction } from './nav.js';
import {
  EMPTY_BACKLOG,
  initialNav,
  type BacklogState,
  type CodeDiff,
  type DashboardState,
  type JobRecord,
  type RunnerState,
} from './state.js';

/**
 * The live pane's lines with secrets redacted, as one text: a private key
 * block spans lines. (Control characters are escaped where lines are drawn.)
 */
const redactLines = (lines: string[]) => redact(lines.join('\n')).split('\n');

/** Lines kept per job in the live pane (the pane shows the last ones). */
export const LIVE_LINES = 500;

export interface DashboardActions {
  /** Replaces the job list, keeping the identity of every job whose record did not change. */
  setJobs(jobs: BoardJob[]): void;
  /** Merges reloaded jobs into the list (new ones first), leaving the others as they are. */
  mergeJobs(jobs: BoardJob[]): void;
  /** The whole record of the shown job, whose entry in the list is a card (DashboardState.shown). */
  setShown(job: Job | null): void;
  setStale(stale: Record<string, boolean>): void;
  setTitles(titles: Record<string, string>): void;
  setBacklog(backlog: BacklogState): void;
  setRunner(runner: RunnerState | null): void;
  setLive(jobId: string, lines: string[]): void;
  /** One tracker report: replaces the file's previous entry, in the job's files and its iteration's. */
  trackFile(jobId: string, file: FileChange): void;
  /** A job's next iteration started (an implement pass): its iteration's files start empty. */
  startIteration(jobId: string): void;
  setDiff(key: string, diff: CodeDiff): void;
  setRecord(jobId: string, record: JobRecord): void;
  /** The log pane's text size, as the view lays it out. */
  setLogSize(width: number, height: number): void;
  dispatch(action: NavAction): void;
  setMessage(message: string | null): void;
}

export type DashboardStore = StoreApi<DashboardState & DashboardActions>;

export interface StoreInit {
  repo: string | null;
  repoLabel: string;
  /** Shown in the header line; read once at startup by the CLI (II_DASHBOARD_BANNER). */
  banner?: string | null;
  color?: boolean;
  jobs?: BoardJob[];
}

/**
 * Whether a reloaded job equals the one shown, so its card keeps its identity
 * (and is not re-rendered). The stamps decide most cases cheaply; equal stamps
 * are not enough on their own, as two writes within the same millisecond (a
 * commit, then its test result) share one updated_at and the dashboard may
 * have read between them.
 */
const same = (a: BoardJob, b: BoardJob) =>
  a.updated_at === b.updated_at &&
  a.status === b.status &&
  a.stage === b.stage &&
  a.heartbeat_at === b.heartbeat_at &&
  JSON.stringify(a) === JSON.stringify(b);

export function createDashboardStore(init: StoreInit): DashboardStore {
  return createStore<DashboardState & DashboardActions>()((set, get) => {
    const withNav = (patch: Partial<DashboardState>) => {
      const prev = get();
      const next = { ...prev, ...patch };
      next.nav = keepSelection(prev, next);
      const nav = sanitizeNav(next);
      return nav === prev.nav ? patch : { ...patch, nav };
    };
    return {
      repo: init.repo,
      repoLabel: init.repoLabel,
      banner: init.banner ?? null,
      jobs: init.jobs ?? [],
      shown: null,
      todoTitles: {},
      backlog: EMPTY_BACKLOG,
      runner: null,
      stale: {},
      live: {},
      files: {},
      iterationFiles: {},
      diffs: {},
      records: {},
      nav: initialNav(),
      logSize: { width: 80, height: 20 },
      message: null,
      color: init.color ?? true,

      setJobs(jobs) {
        const old = new Map(get().jobs.map((j) => [j.id, j]));
        let changed = jobs.length !== old.size;
        const next = jobs.map((j, i) => {
          const prev = old.get(j.id);
          if (prev && same(prev, j)) {
            if (get().jobs[i] !== prev) changed = true;
            return prev;
          }
          changed = true;
          return j;
        });
        if (changed) set(withNav({ jobs: next }));
      },
      mergeJobs(jobs) {
        if (jobs.length === 0) return;
        const cur = get().jobs;
        const byId = new Map(jobs.map((j) => [j.id, j]));
        let changed = false;
        const next = cur.map((j) => {
          const n = byId.get(j.id);
          byId.delete(j.id);
          if (!n || same(n, j)) return j;
          changed = true;
          return n;
        });
        const added = [...byId.values()];
        if (added.length) {
          changed = true;
          next.unshift(...added);
          next.sort((a, b) => (a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0));
        }
        if (changed) set(withNav({ jobs: next }));
      },
      setShown(job) {
        if (get().shown !== job) set(withNav({ shown: job }));
      },
      setStale(stale) {
        const cur = get().stale;
        const keys = Object.keys(stale);
        if (keys.length === Object.keys(cur).length && keys.every((k) => cur[k] === stale[k])) return;
        set({ stale });
      },
      setTitles(titles) {
        set({ todoTitles: { ...get().todoTitles, ...titles } });
      },
      setBacklog(backlog) {
        set(withNav({ backlog }));
      },
      setRunner(runner) {
        const cur = get().runner;
        if (JSON.stringify(cur) !== JSON.stringify(runner)) set({ runner });
      },
      setLive(jobId, lines) {
        set({ live: { ...get().live, [jobId]: redactLines(lines.slice(-LIVE_LINES)) } });
      },
      trackFile(jobId, file) {
        const put = (list: FileChange[] | undefined) =>
          [...(list ?? []).filter((f) => f.path !== file.path), file].sort((a, b) =>
            a.path.localeCompare(b.path),
          );
        set({
          files: { ...get().files, [jobId]: put(get().files[jobId]) },
          iterationFiles: { ...get().iterationFiles, [jobId]: put(get().iterationFiles[jobId]) },
        });
      },
      startIteration(jobId) {
        set({ iterationFiles: { ...get().iterationFiles, [jobId]: [] } });
      },
      setDiff(key, diff) {
        set({ diffs: { ...get().diffs, [key]: diff } });
      },
      setRecord(jobId, record) {
        set({ records: { ...get().records, [jobId]: record } });
      },
      setLogSize(width, height) {
        const cur = get().logSize;
        if (cur.width !== width || cur.height !== height) set({ logSize: { width, height } });
      },
      dispatch(action) {
        const nav = reduceNav(get(), action);
        if (nav !== get().nav) set({ nav });
      },
      setMessage(message) {
        set({ message });
      },
    };
  });
}
