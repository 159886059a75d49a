// The backlog runner behind `ii run`: a scheduler, not a second job runner.
// It takes ready todos in run order and starts a detached job runner for
// each (`ii job do <todo> --backlog`, which claims the todo in one store
// transaction), keeping at most `slots` jobs of the repository running. Its
// only state is the store plus the children it started and has not yet seen
// claim, so a SIGKILL of it strands nothing, and a new one counts the jobs
// already running against its slots.
import { watch, type FSWatcher } from 'node:fs';
import { hostName } from '../proc/host.js';
import type { ChildProcess } from 'node:child_process';
import { backlog, type Backlog, type JobBrief } from '../model/backlog.js';
import { BacklogCopy } from './backlog-copy.js';
import { isStale } from '../model/derive.js';
import { takesRunnerSlot } from '../model/backlog-runner.js';
import type { Job, JobStatus } from '../model/job.js';
import type { Todo } from '../model/todo.js';
import type { AsyncStateStore } from '../state/async-api.js';
import { abandonJob } from '../job/abandon.js';
import { reapDeadRunner, runnerExitedIn, runnerGoneIn, type DeadRunnerCleanup } from '../job/dead-runner.js';
import { settleStranded, type SettledTodo } from '../job/stranded.js';
import { strandedJobs } from '../model/stranded.js';
import {
  CLAIM_LOST_EXIT,
  spawnBacklogJob,
  type BacklogJobOptions,
  type Detached,
  type Standby,
} from '../job/detached.js';
import { localProbe } from '../proc/alive.js';
import { mark } from '../proc/trace.js';

export interface BacklogRunnerOptions {
  store: AsyncStateStore;
  repo: { root: string; slug: string };
  /**
   * Ends the session of a job whose runner is gone: failed (its workspace
   * reset and freed, its todo reopened) unless told done (a completed job's
   * runner killed before it ended the session: its todo done). The
   * caller's composition brings the git that does it.
   */
  finishSession: (sessionId: string, outcome?: 'done' | 'failed') => Promise<void>;
  /** Jobs of the repository running at once, those started elsewhere included. */
  slots: number;
  /** The slots now, read before each look (the board's +/- change them in the store); else `slots`. */
  slotsNow?: () => number | Promise<number>;
  /** [run] max-attempts. */
  maxAttempts: number;
  /** A dep is done once its commits landed, not when its job completed (ii run --land). */
  depsLanded?: boolean;
  /** Work of the caller's that may still make a todo ready (landings queued or under way): the run is not over. */
  pending?: () => boolean;
  /** Keep going when nothing is ready, waiting for new todos. */
  watch?: boolean;
  /** Start at most this many jobs, then wait for them and stop. */
  maxJobs?: number;
  /** Passed to each job (--agent). */
  agent?: string;
  /** Passed to each job (--rev): the base branch, fixed when the run starts. */
  rev?: string;
  /** Each job is recorded as to land when it claims its todo (ii run --land; --to-land). */
  toLand?: boolean;
  /** Each job's runner starts with its nice value raised by this ([run] nice, --nice). */
  nice?: number;
  /** How often the store is looked at between child exits (ms). */
  pollMs?: number;
  /**
   * What the other `ii run` of the repository are starting (their job
   * runners that have not claimed yet): they see none of ours in the store
   * until it claims, so without this each would start one for the same
   * ready todo, and all but one would lose the claim (a process each).
   */
  starts?: StartRegistry;
  /**
   * Look at the store as soon as its database is written (a job ended, a
   * todo was added), not only every pollMs: a freed slot is filled at once.
   */
  wakeOnWrite?: boolean;
  /** Starts one job runner; spawnBacklogJob unless a test says otherwise. */
  start?: (todo: Todo) => Detached;
  /**
   * Starts a standby runner (spawnStandbyJob): one is kept waiting while more
   * todos may start (two while two or more wait for a slot, see
   * MAX_STANDBYS), and the next job goes to the oldest, so a freed slot
   * costs no process start; a standby whose job is over may come back
   * (Standby.onBack), and is handed the next todo first. None when not given.
   */
  standby?: () => Standby;
  /**
   * How long after a standby is handed a todo its replacement waits at most
   * (ms; default STANDBY_HOLD_MS) for that runner's claim.
   */
  standbyHoldMs?: number;
  onEvent?: (e: BacklogRunEvent) => void;
  /** After each look at the store, with what it saw. */
  onTick?: (s: BacklogSnapshot) => void | Promise<void>;
}

/** Shared with the other backlog runners of the repository (the store's runners table). */
export interface StartRegistry {
  /**
   * Todos other live runners have started a job runner for that has not
   * claimed yet, each with whether that runner is on this machine (only
   * those take this machine's slots).
   */
  others(): Promise<{ todo: string; here: boolean }[]>;
  /** Takes `todoId` for this runner, unless another live runner has; false then. */
  take(todoId: string): Promise<boolean>;
  /** This runner's starts not yet claimed, now. */
  set(todoIds: string[]): Promise<void>;
}

/** What one job the runner started came to. */
export type RunOutcome = JobStatus | 'stale' | 'not-started';

export type BacklogRunEvent =
  /** standby: the job went to the runner kept waiting (no process start). */
  | { kind: 'started'; todo: Todo; pid: number; log: string; standby: boolean }
  | { kind: 'claimed'; todo: Todo; job_id: string }
  /** The runner's child ended: job_id null when it made no job (lost the claim, or failed before). */
  /** job: its record as the look that saw it end read it (absent when it made none). */
  | {
      kind: 'ended';
      todo: Todo;
      job_id: string | null;
      outcome: RunOutcome | 'lost';
      log: string;
      job?: Job | null;
    }
  /** starting: runners of this run that have not claimed their job yet. */
  | { kind: 'stopping'; running: string[]; starting: number }
  /** A job claimed after abandonRunning, asked to abandon as it appeared. */
  | { kind: 'abandoning'; todo: Todo; job_id: string }
  /** A job whose runner was gone (killed, crashed), cleaned up here: failed, its todo open again. */
  | { kind: 'reaped'; cleanup: DeadRunnerCleanup }
  /** A todo left in progress by a runner killed after its job ended: its session ended here. */
  | { kind: 'settled'; settled: SettledTodo };

/** One job this runner started and still waits on. */
export interface RunningJob {
  todo: Todo;
  pid: number;
  log: string;
  job: JobBrief | null;
}

export interface BacklogSnapshot {
  /** Jobs this runner started that have not ended, in start order. */
  mine: RunningJob[];
  /** Live jobs of the repository started elsewhere (they take slots too). */
  others: number;
  /** Slots taken: live jobs of the repository and runners of ours not yet claimed. */
  used: number;
  slots: number;
  ready: number;
  blocked: number;
  completed: number;
  failed: number;
  stopping: boolean;
  /** The pid of the standby runner the next todo goes to, if one waits. */
  standby: number | null;
}

export interface BacklogRunResult {
  completed: string[];
  /** Failed, abandoned, left stale, or never started (todo ids for those). */
  failed: { todo_id: string; job_id: string | null; outcome: RunOutcome }[];
}

interface Child extends RunningJob {
  spawnedAt: string;
  child: ChildProcess;
  /** Its process's exit, or (`back`) its return for another todo: either way its job is over. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** The standby this job was handed to: it may come back for another todo once the job is over. */
  standby: Standby | null;
  /** Set when it came back (its job's wrap-up done): it waits for a todo again. */
  back: boolean;
}

/** The least time between two looks at the store, however often it is written. */
const MIN_TICK_GAP_MS = 15;

/**
 * The same on a shared PostgreSQL store, where every machine's writes wake
 * every machine's run (a job's stage, its heartbeat, its texts) and each look
 * is four queries to the server (five before cli/run/run.ts read its own
 * slots from the list of runners): in bench/shared-store.bench.js, 3
 * machines' runs looked about 5,500 times (14 a second each), a third of
 * all its statements. A freed slot is filled up to this much later.
 */
const SHARED_TICK_GAP_MS = 100;

/** Standbys that may end before their hand-over before this run starts its jobs cold. */
const STANDBY_FAILURES = 3;

/**
 * Standbys kept at most. A standby takes a few hundred ms of CPU to load
 * (more under load), so one alone is not ready again when two jobs end
 * within that time: the second hand-over then waited for its load (up to
 * 490 ms of the hand-over in bench/handover.bench.js, --jobs 2). A second
 * covers that; more would hold idle processes (about 35 MB each) for what
 * is rarer still.
 */
const MAX_STANDBYS = 2;

/**
 * A standby's replacement is not started in the same look as its hand-over:
 * its load (a Node start and the job's modules, a few hundred ms of CPU)
 * then competed with the handed runner's checks and claim on the same cores
 * (bench/handover.bench.js). It starts once the store shows that runner's
 * claim (or it ended, or this long passed). Held longer, until that runner's
 * first prompt (1.5 s), the replacement was still loading at the next
 * hand-over in the bench: 2 → 200 ms of waiting for it, more than was won.
 */
export const STANDBY_HOLD_MS = 1500;

/** How long the run's end waits for its dismissed standbys to exit (each takes a few ms once told). */
const DISMISSED_WAIT_MS = 5000;

/**
 * How long after its job ended a live runner is waited for to end the
 * job's session (it marks the todo done or open, moments later) before the
 * run may end without it: past that it is hung, and its job has ended.
 */
const ENDING_WAIT_MS = 60_000;

export class BacklogRunner {
  private readonly o: BacklogRunnerOptions;
  private readonly children = new Map<number, Child>();
  private readonly result: BacklogRunResult = { completed: [], failed: [] };
  /** Todos whose runner failed before making a job: not started again by this run. */
  private readonly unstartable = new Set<string>();
  private startedCount = 0;
  /** What was last told to the start registry. */
  private told = '[]';
  private stopping = false;
  /** Set by abandonRunning: a job claimed after it is asked to abandon at once. */
  private abandonReason: string | null = null;
  private wake: (() => void) | null = null;
  private poked = false;
  private last: BacklogSnapshot;
  /** The standby runners waiting for a todo, oldest (the next one handed a todo) first. */
  private waiting: Standby[] = [];
  /** The standbys this run started that have not exited (waited for at its end: standbysGone). */
  private readonly made: Standby[] = [];
  /** Standbys that ended before they were handed a todo: after a few, jobs start cold. */
  private standbyFailures = 0;
  /** Whether a runner came back for another todo in this run (runners do, here): one ending its job will be a standby again. */
  private comesBack = false;
  /** The runner last handed a todo by a standby, and until when at most: no new standby starts before its claim. */
  private hold: { pid: number; until: number } | null = null;
  private holdTimer: NodeJS.Timeout | null = null;
  /**
   * Jobs whose runner is gone, being cleaned up, and stranded todos being
   * settled (keyed `settle:<job>`); and those whose cleanup failed or had
   * nothing to do (not tried again).
   */
  private readonly reaping = new Set<string>();
  private readonly unreapable = new Set<string>();
  /** The repository's todos and job briefs, brought up to date at each look. */
  private readonly copy: BacklogCopy;
  /**
   * The backlog as last decided, and from which read of the copy; with the
   * todos in progress that no job holds (model/stranded.ts), by the job
   * that ended last on each.
   */
  private planned: { briefs: JobBrief[]; todos: Todo[]; plan: Backlog; stranded: JobBrief[] } | null = null;

  constructor(o: BacklogRunnerOptions) {
    this.o = o;
    this.copy = new BacklogCopy(o.store, o.repo.slug);
    this.last = {
      mine: [],
      others: 0,
      used: 0,
      slots: o.slots,
      ready: 0,
      blocked: 0,
      completed: 0,
      failed: 0,
      stopping: false,
      standby: null,
    };
  }

  /** Starts no new job from now on; the running ones go on (run() returns once they end). */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.emit({ kind: 'stopping', running: this.runningJobIds(), starting: this.startingCount() });
    this.poke();
  }

  /** Asks the runners of this run's jobs to abandon them; returns the job ids asked. */
  async abandonRunning(reason = 'ii run was stopped'): Promise<string[]> {
    this.stop();
    // Runners still starting have no job to ask yet: each is asked the
    // moment its job appears (tick), or a Ctrl-C pressed right after
    // "started" would leave that job running on.
    this.abandonReason = reason;
    const asked: string[] = [];
    for (const id of this.runningJobIds()) if (await this.abandonOne(id, reason)) asked.push(id);
    return asked;
  }

  /** The runner this run started as `pid` (this machine's pids), while it has not exited. */
  private ownRunning(pid: number | null): Child | undefined {
    const c = pid === null ? undefined : this.children.get(pid);
    return c && !c.exit && c.child.exitCode === null && c.child.signalCode === null ? c : undefined;
  }

  /** Runners of this run that have not claimed their job yet (asked to abandon it once they do). */
  startingCount(): number {
    return [...this.children.values()].filter((c) => !c.job && !c.exit).length;
  }

  private async abandonOne(id: string, reason: string): Promise<boolean> {
    const job = await this.o.store.jobs.get(id);
    if (!job || job.status !== 'active') return false;
    await abandonJob(this.o.store, this.o.store.dir, job, {
      reason,
      probe: localProbe,
      // A runner gone already: its session is ended by the cleanup.
      finishSession: this.o.finishSession,
    });
    return true;
  }

  /** The latest view (after each look at the store). */
  snapshot(): BacklogSnapshot {
    return this.last;
  }

  /** Runs until nothing is ready and nothing runs (or, with watch, until stop() and the jobs end). */
  async run(): Promise<BacklogRunResult> {
    const watcher = this.o.wakeOnWrite ? await this.watchStore() : null;
    try {
      return await this.loop();
    } finally {
      await watcher?.close();
      this.dismissStandby();
      await this.standbysGone();
    }
  }

  /**
   * Waits, for DISMISSED_WAIT_MS at most, for every standby this run started
   * to have exited: each is dismissed by now and ends as it reads so, but a
   * runner that came back for the last job was dismissed only as the run
   * ended, and ii run returned with it still closing its store.
   */
  private async standbysGone(): Promise<void> {
    const live = [...this.made];
    if (live.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(live.map((s) => new Promise((res) => s.child.once('exit', res)))),
      new Promise((res) => (timer = setTimeout(res, DISMISSED_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /**
   * Wakes the loop on a write to the store: PostgreSQL tells of each commit
   * (from any machine); SQLite's are seen as its database files change.
   */
  private async watchStore(): Promise<{ close(): unknown } | null> {
    const { store } = this.o;
    if (!store.watch) return this.watchFiles();
    try {
      const stop = await store.watch(() => this.poke());
      return { close: () => stop().catch(() => {}) };
    } catch {
      return null; // the poll alone
    }
  }

  /** Wakes the loop on a write to the store's database files (state.db, its WAL). */
  private watchFiles(): FSWatcher | null {
    try {
      const w = watch(this.o.store.dir, { persistent: false }, (_event, name) => {
        if (typeof name === 'string' && name.startsWith('state.db')) this.poke();
      });
      w.on('error', () => {}); // the poll goes on
      return w;
    } catch {
      return null; // no watching here: the poll alone
    }
  }

  private async loop(): Promise<BacklogRunResult> {
    for (;;) {
      const at = performance.now();
      this.poked = false;
      const done = await this.tick();
      if (done) return this.result;
      // Writes come in bursts (a job's end is several): one look per burst.
      const gap = this.o.store.driver === 'postgres' ? SHARED_TICK_GAP_MS : MIN_TICK_GAP_MS;
      const since = performance.now() - at;
      if (since < gap) await new Promise((r) => setTimeout(r, gap - since));
      if (this.poked) continue; // woken while it looked or paused
      await new Promise<void>((res) => {
        const t = setTimeout(res, this.o.pollMs ?? 250);
        this.wake = () => {
          clearTimeout(t);
          res();
        };
      });
      this.wake = null;
    }
  }

  private poke(): void {
    this.poked = true;
    this.wake?.();
  }

  private emit(e: BacklogRunEvent): void {
    this.o.onEvent?.(e);
  }

  private runningJobIds(): string[] {
    return [...this.children.values()].flatMap((c) => (c.job ? [c.job.id] : []));
  }

  /** One look at the store: note ended children, start what fits. True when the run is over. */
  private async tick(): Promise<boolean> {
    // Read in this order: the other runs' starts, the jobs, then the todos
    // (the copy reads its changes in that order too).
    // A start leaves the registry only once its claim is in the store, and a
    // claim writes its job and its todo in one transaction, so a todo still
    // ready in the last read was claimed in none of the earlier ones: its
    // start is still in the registry read first. Todos read first, a claim in
    // between showed the todo ready and its job held, no start in the
    // registry, and this run started a second runner for it, which lost the
    // claim (run-backlog "two ii run at once", in CI).
    const starting = (await this.o.starts?.others()) ?? [];
    const { briefs, todos } = await this.copy.read();
    const host = hostName();
    const now = Date.now();
    // A child's job is the one it claimed: same pid on this host, started after it was.
    for (const c of this.children.values()) {
      const job =
        briefs.find((j) => j.pid === c.pid && j.host === host && j.started_at >= c.spawnedAt) ??
        (c.job ? briefs.find((j) => j.id === c.job!.id) : undefined);
      if (job && !c.job) {
        this.emit({ kind: 'claimed', todo: c.todo, job_id: job.id });
        const why = this.abandonReason;
        if (why && job.status === 'active')
          void this.abandonOne(job.id, why).then(
            (asked) => asked && this.emit({ kind: 'abandoning', todo: c.todo, job_id: job.id }),
            () => {},
          );
      }
      c.job = job ?? c.job;
      // A child that died with its job active (kill -9) is that job's gone
      // runner: its job is cleaned up first, then counted as it ended.
      if (c.exit && !(c.job?.status === 'active' && (await this.reap(c.job)))) await this.finish(c);
    }
    for (const j of briefs) if (j.status === 'active') await this.reap(j);
    // Decided again only when the copy changed (a look without a write in between gives the same read).
    if (this.planned?.briefs !== briefs || this.planned.todos !== todos)
      this.planned = {
        briefs,
        todos,
        plan: backlog(todos, briefs, {
          maxAttempts: this.o.maxAttempts,
          ...(this.o.depsLanded ? { depsLanded: true } : {}),
        }),
        stranded: strandedJobs(todos, briefs),
      };
    const { plan } = this.planned;
    // Each such todo's runner of this machine is still ending its session
    // (it moves on by itself: the run is not over until then, for a while at
    // most) or was killed first (ended here). Another machine's is its own.
    let ending = 0;
    for (const j of this.planned.stranded) {
      if (j.host !== host || j.pid === null) continue;
      const alive = !!this.ownRunning(j.pid) || !(await runnerExitedIn(this.o.store, j));
      if (!alive) this.settle(j);
      else if (now - Date.parse(j.completed_at ?? j.updated_at) < ENDING_WAIT_MS) ending++;
    }
    const mineIds = new Set(this.runningJobIds());
    const probe = { host, pidAlive: (pid: number) => !!this.ownRunning(pid) || localProbe.pidAlive(pid) };
    const live = briefs.filter((j) => j.status === 'active' && !isStale(j, now, probe));
    const pendingTodos = [...this.children.values()].filter((c) => !c.job).map((c) => c.todo.id);
    await this.tell(pendingTodos);
    // Others' starts whose job is not in the store yet (a claimed one counts as live).
    const held = new Set(briefs.filter((j) => j.status === 'active').map((j) => j.todo_id));
    const unclaimed = starting.filter((s) => !held.has(s.todo));
    // Every machine's starts are kept from starting twice; only this
    // machine's jobs take its slots: on a shared store `--jobs N` is N on
    // each machine, not N between them (one machine's jobs were all of them
    // before a store could be shared, and still are on SQLite).
    const othersStarting = new Set(unclaimed.map((s) => s.todo));
    const liveHere = live.filter((j) => takesRunnerSlot(j.host, host));
    const startingHere = unclaimed.filter((s) => s.here).length;
    let running = liveHere.length + pendingTodos.length + startingHere;
    // Taking this machine's slots (the view's "started elsewhere")…
    const others = liveHere.filter((j) => !mineIds.has(j.id)).length + startingHere;
    // …and anywhere, which may still make a todo ready (the run waits for them).
    const anywhere = live.filter((j) => !mineIds.has(j.id)).length + othersStarting.size + ending;
    const taken = new Set([...this.children.values()].map((c) => c.todo.id));
    const startable = plan.ready.filter(
      (t) => !taken.has(t.id) && !othersStarting.has(t.id) && !this.unstartable.has(t.id),
    );
    const capped = this.o.maxJobs !== undefined && this.startedCount >= this.o.maxJobs;
    const slots = Math.max(1, (await this.o.slotsNow?.()) ?? this.o.slots);
    let unstarted = startable.length;
    // Several started in this look start together (BacklogJobOptions.bootLow).
    const together = Math.min(startable.length, slots - running) > 1;
    if (!this.stopping && !capped)
      for (const todo of startable) {
        if (running >= slots) break;
        if (this.o.maxJobs !== undefined && this.startedCount >= this.o.maxJobs) break;
        // Another run took it since we looked: it counts against our slots as theirs.
        if (this.o.starts && !(await this.o.starts.take(todo.id))) {
          running++;
          continue;
        }
        this.startJob(todo, together);
        running++;
        unstarted--;
      }
    // take() noted each start in the registry already.
    if (this.o.starts)
      this.told = JSON.stringify([...this.children.values()].filter((c) => !c.job).map((c) => c.todo.id));
    // A standby while a next job may come: a todo waiting for a slot, one
    // that a running job may unblock, or (watching) one not written yet.
    const more =
      this.o.watch === true || unstarted > 0 || (plan.blocked.length > 0 && this.children.size > 0);
    const room = this.o.maxJobs === undefined ? Infinity : this.o.maxJobs - this.startedCount;
    // Two when two todos wait for a slot and two slots may free: no more than could be handed a todo.
    const want = Math.min(MAX_STANDBYS, slots, room, Math.max(1, unstarted));
    if (!this.stopping && room > 0 && more) this.keepStandby(want, this.holding());
    else this.dismissStandby();
    this.last = {
      mine: [...this.children.values()].map(({ todo, pid, log, job }) => ({ todo, pid, log, job })),
      others,
      used: running,
      slots,
      ready: plan.ready.length,
      blocked: plan.blocked.length,
      completed: this.result.completed.length,
      failed: this.result.failed.length,
      stopping: this.stopping,
      standby: this.waiting[0]?.pid ?? null,
    };
    await this.o.onTick?.(this.last);
    // A cleanup under way may reopen a todo (and must not be cut off by the exit).
    if (this.children.size > 0 || this.reaping.size > 0) return false;
    if (this.stopping || (this.o.maxJobs !== undefined && this.startedCount >= this.o.maxJobs)) return true;
    if (this.o.watch || this.o.pending?.()) return false;
    // Nothing of ours runs: done once nothing could start and no job elsewhere
    // could still make a todo ready.
    const left = plan.ready.filter((t) => !this.unstartable.has(t.id)).length;
    return left === 0 && anywhere === 0;
  }

  /**
   * Cleans up `job` in the background when its runner is gone (another
   * run's child killed, or ours), as prune would: left active it holds its
   * todo and workspace for good. True while that is under way.
   */
  private async reap(job: JobBrief): Promise<boolean> {
    if (this.reaping.has(job.id)) return true;
    // A runner of this run's that has not exited is alive, and its pid is
    // not another's (not reaped yet): no /proc read, no store query. Asked of
    // every active job at every look, the check took 0.9 s of an ii run's
    // 6.4 s of CPU in bench/shared-store (BENCH_RUN_PROF), and a query each.
    // Only for the job that child claimed: an older job recorded with the
    // same pid (its runner long gone, the pid reused by this child) is not.
    if (job.host === hostName() && this.ownRunning(job.pid)?.job?.id === job.id) return false;
    if (this.unreapable.has(job.id) || !(await runnerGoneIn(this.o.store, job))) return false;
    this.reaping.add(job.id);
    void reapDeadRunner(this.o.store, job.id, { by: 'ii run', finishSession: this.o.finishSession })
      .then(
        (c) => c && this.emit({ kind: 'reaped', cleanup: c }),
        () => this.unreapable.add(job.id),
      )
      .finally(() => {
        this.reaping.delete(job.id);
        this.poke();
      });
    return true;
  }

  /**
   * Ends, in the background, the session that the gone runner of `job` left
   * active after the job ended (job/stranded.ts), so its todo is done or
   * open again; the run does not end while that is under way.
   */
  private settle(job: JobBrief): void {
    const key = `settle:${job.id}`;
    if (this.reaping.has(key) || this.unreapable.has(key)) return;
    this.reaping.add(key);
    void settleStranded(this.o.store, job.id, this.o.finishSession)
      .then(
        (settled) => {
          // Nothing to do (the todo moved on, or a job took it): not asked again.
          if (!settled) this.unreapable.add(key);
          else this.emit({ kind: 'settled', settled });
        },
        () => this.unreapable.add(key),
      )
      .finally(() => {
        this.reaping.delete(key);
        this.poke();
      });
  }

  /** Tells the registry this runner's starts not yet claimed, when they changed. */
  private async tell(todoIds: string[]): Promise<void> {
    if (!this.o.starts) return;
    const now = JSON.stringify(todoIds);
    if (now === this.told) return;
    this.told = now;
    await this.o.starts.set(todoIds);
  }

  /** Whether a runner just handed a todo has not claimed it yet (its replacement waits). */
  private holding(): boolean {
    const h = this.hold;
    if (!h) return false;
    const c = this.children.get(h.pid);
    if (!c || c.exit || c.job || performance.now() >= h.until) {
      this.hold = null;
      return false;
    }
    return true;
  }

  /** Starts standbys until `want` wait (not while `held`, or while standbys keep failing); dismisses those past it. */
  private keepStandby(want: number, held = false): void {
    while (this.waiting.length > want) this.waiting.pop()!.dismiss();
    if (held) return;
    // Runners whose job ended and that will wait again once its wrap-up is done count as waiting.
    const returning = this.comesBack
      ? [...this.children.values()].filter((c) => this.returning(c)).length
      : 0;
    while (
      this.waiting.length + returning < want &&
      this.o.standby &&
      this.standbyFailures < STANDBY_FAILURES
    ) {
      const s = this.o.standby();
      mark('standby_spawn', { child: s.pid });
      this.made.push(s);
      this.waiting.push(s);
      s.onBack((code) => this.cameBack(s, code));
      // One listener for the process's life, however many jobs it runs (one per job piled up past Node's warning).
      s.child.once('exit', (code, signal) => {
        this.made.splice(this.made.indexOf(s), 1);
        const c = this.children.get(s.pid);
        if (c?.standby === s && !c.exit) {
          c.exit = { code, signal }; // its job's runner, gone
          this.poke();
          return;
        }
        if (!this.waiting.includes(s)) return; // dismissed, or gone after its job
        this.waiting = this.waiting.filter((w) => w !== s);
        this.standbyFailures++;
        this.poke();
      });
    }
  }

  /** A runner handed a todo by a standby whose job has ended: it comes back unless it exits. */
  private returning(c: Child): boolean {
    return c.standby !== null && !c.exit && c.job !== null && c.job.status !== 'active';
  }

  /** Standby `s`'s job ended, its wrap-up done, and it waits for another todo: that job is over as if it had exited. */
  private cameBack(s: Standby, code: number): void {
    const c = this.children.get(s.pid);
    if (!c || c.standby !== s || c.exit) return;
    mark('standby_back', { child: s.pid, code });
    this.comesBack = true;
    c.exit = { code, signal: null };
    c.back = true;
    this.poke();
  }

  private dismissStandby(): void {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    const all = this.waiting;
    this.waiting = [];
    for (const s of all) s.dismiss();
  }

  private startJob(todo: Todo, together = false): void {
    const spawnedAt = new Date().toISOString();
    const standby = this.waiting.shift() ?? null;
    const d = standby
      ? standby.handOver(todo.id)
      : (
          this.o.start ??
          ((t: Todo) =>
            spawnBacklogJob(t.id, this.o.repo, this.o.store.dir, {
              ...this.jobOpts(),
              ...(together ? { bootLow: true } : {}),
            }))
        )(todo);
    this.startedCount++;
    mark('handover', { todo: todo.id, child: d.pid, standby: standby ? 1 : 0 });
    const c: Child = {
      todo,
      pid: d.pid,
      log: d.log,
      job: null,
      spawnedAt,
      child: d.child,
      exit: null,
      standby,
      back: false,
    };
    this.children.set(d.pid, c);
    if (standby) {
      const ms = this.o.standbyHoldMs ?? STANDBY_HOLD_MS;
      this.hold = { pid: d.pid, until: performance.now() + ms };
      // The loop may sleep longer than the hold: look again as it ends.
      if (this.holdTimer) clearTimeout(this.holdTimer);
      this.holdTimer = setTimeout(() => this.poke(), ms);
      this.holdTimer.unref();
    }
    const exited = d.child.exitCode !== null || d.child.signalCode !== null;
    if (exited)
      c.exit = { code: d.child.exitCode, signal: d.child.signalCode }; // a standby that just died
    else if (!standby)
      d.child.once('exit', (code, signal) => {
        c.exit = { code, signal };
        this.poke();
      }); // a standby's exit is heard where it was started (keepStandby)
    this.emit({ kind: 'started', todo, pid: d.pid, log: d.log, standby: standby !== null });
  }

  private jobOpts(): BacklogJobOptions {
    return {
      ...(this.o.agent ? { agent: this.o.agent } : {}),
      ...(this.o.rev ? { rev: this.o.rev } : {}),
      ...(this.o.toLand ? { toLand: true } : {}),
      ...(this.o.nice ? { nice: this.o.nice } : {}),
    };
  }

  /** A child that exited or came back: what its job came to. */
  private async finish(c: Child): Promise<void> {
    this.children.delete(c.pid);
    // Come back: the next todo goes to it first (loaded, and ready now), unless the run is ending.
    if (c.back && c.standby) {
      const gone = c.child.exitCode !== null || c.child.signalCode !== null;
      if (this.stopping) c.standby.dismiss();
      else if (!gone) this.waiting.unshift(c.standby);
    }
    if (!c.job) {
      if (c.exit?.code === CLAIM_LOST_EXIT) {
        // Another runner took the todo first (or it stopped being ready): not ours.
        this.startedCount--;
        this.forget(c);
        this.emit({ kind: 'ended', todo: c.todo, job_id: null, outcome: 'lost', log: c.log });
        return;
      }
      this.unstartable.add(c.todo.id);
      this.result.failed.push({ todo_id: c.todo.id, job_id: null, outcome: 'not-started' });
      this.forget(c);
      this.emit({ kind: 'ended', todo: c.todo, job_id: null, outcome: 'not-started', log: c.log });
      return;
    }
    const job = await this.o.store.jobs.get(c.job.id);
    const outcome: RunOutcome = !job ? 'not-started' : job.status === 'active' ? 'stale' : job.status;
    if (outcome === 'completed') this.result.completed.push(c.job.id);
    else this.result.failed.push({ todo_id: c.todo.id, job_id: c.job.id, outcome });
    this.forget(c);
    this.emit({ kind: 'ended', todo: c.todo, job_id: c.job.id, outcome, log: c.log, job });
  }

  /**
   * Takes an ended child out of the latest view before its end is told: ii
   * run draws the view right after the line, and until the next look it
   * showed the job still in its last stage and the run with 0 done.
   */
  private forget(c: Child): void {
    this.last = {
      ...this.last,
      mine: this.last.mine.filter((m) => m.pid !== c.pid),
      completed: this.result.completed.length,
      failed: this.result.failed.length,
    };
  }
}
