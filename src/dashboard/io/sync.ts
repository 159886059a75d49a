// Keeps the dashboard store in step with the state dir: a chokidar watcher on
// the database and on the active jobs' event logs, and a watch on the
// transcript of the one job the board shows, which is how every runner
// reaches the board (the dashboard runs none itself: each job
// is an `ii job do` process). Only what changed is read again: the database's version number
// says whether to reload, only the jobs written after the version last seen
// are reloaded, and logs are read from where the last read stopped.
import { watch as watchDir, type FSWatcher as DirWatcher } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import {
  backlog,
  updateBacklog,
  type Backlog,
  type BacklogIndex,
  type JobBrief,
} from '../../model/backlog.js';
import { strandedJobs } from '../../model/stranded.js';
import { isStale } from '../../model/derive.js';
import { runnerAlive, runnersLand } from '../../model/backlog-runner.js';
import type { Job } from '../../model/job.js';
import type { Todo } from '../../model/todo.js';
import { localProbe } from '../../proc/alive.js';
import { quietSince, transcriptText } from '../../job-log/transcript-text.js';
import { eventLines, logText, type EventLine } from '../../job-log/event-text.js';
import { JobEvent } from '../../model/event.js';
import type { AsyncStateStore } from '../../state/async-api.js';
import type { BoardSource } from './board-source.js';
import { logIsElsewhere, StoredStreamTail, type StoredJobLog } from '../../job-log/store-source.js';
import { StoredLogs } from './stored-logs.js';
import { tailEvents } from '../../state/events.js';
import { JsonLinesTail } from '../../state/jsonl.js';
import { readJobRecord } from './record.js';
import type { DashboardStore } from '../view/store.js';
import { shownJobId } from '../view/board.js';
import { isWholeJob, toJobCard, type BoardJob } from '../../model/job-card.js';
import { silenceLine } from '../view/silence.js';

/** Entries of a transcript kept for re-rendering (message chunks join across entries). */
const TRANSCRIPT_ENTRIES = 4000;
/** What earlier agent turns recorded (verdicts, tests, commits), kept above the current one. */
const EARLIER_LINES = 40;
/**
 * How much of a transcript the shown job's pane starts from: its end, since
 * the pane keeps only the last TRANSCRIPT_ENTRIES entries anyway. An agent
 * streaming 50 updates a second writes about 1 MB a minute.
 */
export const TRANSCRIPT_TAIL_BYTES = 1 << 20;
/**
 * How often, at most, the shown job's pane is drawn again as its agent
 * streams (ms): 8 times a second reads as live, in far fewer frames than
 * one per streamed update (a keypress's frame is drawn at once, whatever
 * came before it: scripts/ink-key-frames.mjs).
 */
export const LIVE_DRAW_MS = 125;
/** Least time between two reads of a loaded job log that follows its running job. */
export const RECORD_GAP_MS = 250;
/** A loaded log is read again only after this many times its last read's length has passed. */
const RECORD_COST_GAPS = 4;

/** What readLogs reads a log through: a file's tail, or the shared store's copy (StoredStreamTail). */
interface LineTail<T = unknown> {
  read(): ReturnType<JsonLinesTail<T>['read']>;
  readonly breaks: number;
}

interface JobLogs {
  events: LineTail<JobEvent>;
  /** Facts, test results and warnings of the turns before the current agent's. */
  earlier: string[];
  /** The lines of the events since the current agent started, with their event's type. */
  /** `agent`: an agent's warning, which the transcript shown above the events holds too. */
  eventLines: { type: JobEvent['type'] | null; line: EventLine; agent?: boolean }[];
  transcriptPath: string | null;
  transcript: LineTail | null;
  entries: unknown[];
  /** The pane's heading: the current agent session. */
  header: string[];
  /** Whether the agent may be working now (the job is active and not testing): only then can it be quiet. */
  agentStage: boolean;
  /** The quiet agent's line as last drawn (silence.ts), or null. */
  silence: string | null;
  /** Whether the event log gave a line yet (until then the reader is not kept). */
  readAny: boolean;
  /** The shared store's copy of the log, when it is read from there (fromStore). */
  stored: StoredJobLog | null;
}

/** Whether two records of a job differ at most in their heartbeat's time. */
function sameBut(a: BoardJob, b: BoardJob): boolean {
  if (a.updated_at !== b.updated_at || a.status !== b.status || a.pid !== b.pid || a.host !== b.host)
    return false;
  return JSON.stringify({ ...a, heartbeat_at: null }) === JSON.stringify({ ...b, heartbeat_at: null });
}

/** Adds (or removes) `t` as a dependent of each of its deps. */
function link(dependents: Map<string, Set<string>>, t: Todo, add: boolean): void {
  for (const d of t.deps) {
    let set = dependents.get(d);
    if (add) {
      if (!set) dependents.set(d, (set = new Set()));
      set.add(t.id);
    } else set?.delete(t.id);
  }
}

export interface SyncOptions {
  /** The SQLite store itself, or a shared store's copy in memory (board-source.ts StoreMirror). */
  state: BoardSource;
  /**
   * The shared store, when there is one: a job whose log files are not in
   * this state dir (it ran on another machine) is read from the store's copy
   * of its log, followed as lines are appended (LISTEN/NOTIFY).
   */
  stored?: AsyncStateStore;
  dash: DashboardStore;
  /** The window after a read in which further file events are held, and read together at its end (ms). */
  debounceMs?: number;
  /** The fallback poll (stale checks, missed file events), ms. */
  pollMs?: number;
  probe?: { host: string; pidAlive: (pid: number) => boolean };
  /** [run] max-attempts of the repository, for the Backlog column's blocked todos (default 2). */
  maxAttempts?: number;
  /**
   * Cleans up an active job found stale (reapDeadRunner: only when its
   * runner is provably gone), once at a time per job; the board refreshes
   * when it is done. None: stale jobs are only shown so.
   */
  reap?: (job: Job) => Promise<unknown>;
  /**
   * Ends the session a runner of this machine left active after its job
   * ended, once that runner is gone (job/stranded.ts settleStranded): the
   * todo showed in progress with no job on it for good. Asked once per job.
   */
  settle?: (jobId: string) => Promise<unknown>;
  /** The clock the live pane's "no output from the agent for N s" reads (tests move it). */
  now?: () => number;
}

export class DashboardSync {
  private readonly state: BoardSource;
  /** The shared store's copies of the logs of jobs whose files are not here (SyncOptions.stored). */
  private readonly storedLogs: StoredLogs | null;
  private readonly dash: DashboardStore;
  private readonly probe: { host: string; pidAlive: (pid: number) => boolean };
  private readonly logs = new Map<string, JobLogs>();
  private watcher: FSWatcher | null = null;
  private dbWatcher: DirWatcher | null = null;
  /** The window after a read that holds later file events (schedule), and the read waiting for this turn's events. */
  private timer: NodeJS.Timeout | null = null;
  private lead: NodeJS.Immediate | null = null;
  /** The read at the window's start was the database's: read its version again at the window's end. */
  private recheckDb = false;
  private poll: NodeJS.Timeout | null = null;
  /** The store version the board reflects: jobs written after it are reloaded. */
  private version = -1;
  private pendingDb = false;
  private readonly pendingJobs = new Set<string>();
  private closed = false;
  /** What the Backlog column was built from besides the todos: the jobs' statuses, the runners' landing, max-attempts. */
  private backlogKey = '';
  /** The jobs' part of backlogKey, and the list and stale map it was made from (jobsKey). */
  private jobsKeyOf: {
    repo: string;
    jobs: readonly BoardJob[];
    stale: Record<string, boolean>;
    key: string;
  } | null = null;
  /** The repository's todos as last read, and the store version they reflect (only later writes are read again). */
  private todos: {
    repo: string;
    version: number;
    byId: Map<string, Todo>;
    /** The todos that depend on each todo (by id), for updateBacklog. */
    dependents: Map<string, Set<string>>;
  } | null = null;
  /** Todos were read by what changed since the last check of their count (checkTodoCount). */
  private todoCountDue = false;
  /**
   * The repository's job briefs the Backlog column was last built from,
   * until a job is written: a new todo does not change them, and reading
   * them (commit counts of every job) was a third of the time a todo took to
   * reach the board with 1,300 jobs.
   */
  private briefs: { repo: string; list: JobBrief[] } | null = null;
  /** The Backlog column as this sync last decided it (updated in place when only todos change). */
  private planned: { repo: string; plan: Backlog } | null = null;
  private maxAttempts: number;
  /** Jobs whose live lines are behind their logs (drawn when shown). */
  private readonly liveBehind = new Set<string>();
  /**
   * The job whose live lines the board shows (the selected job, or the one
   * drilled into: board.ts shownJobId): only its lines are drawn as its logs
   * grow. Drawing every running job's pane on every line its agent streams
   * (32 jobs at 50 lines a second) kept the dashboard busy for seconds per
   * keypress (bench/scale.bench.js); the others are drawn when they are shown.
   */
  private shown: string | null = null;
  /** What readWhole last looked at, and its subscription (from loadAll). */
  private whole: { id: string | null; jobs: readonly BoardJob[] | null } = { id: null, jobs: null };
  private unsubscribeWhole: (() => void) | null = null;
  private unsubscribe: (() => void) | null = null;
  /** When the shown pane was last drawn, and the timer of its next draw. */
  private lastLiveDraw = 0;
  private liveTimer: NodeJS.Timeout | null = null;
  /** Re-reads of loaded job logs waiting their turn, and when each was last read and how long it took. */
  private readonly recordTimers = new Map<string, NodeJS.Timeout>();
  private readonly recordReads = new Map<string, { at: number; tookMs: number }>();
  /** The latest record of listed jobs whose only change since they were drawn is a heartbeat (withoutBeats). */
  private readonly beats = new Map<string, BoardJob>();
  /** Stale jobs being cleaned up (SyncOptions.reap). */
  private readonly reaping = new Set<string>();
  /** Jobs whose todo was handed to SyncOptions.settle (each once). */
  private readonly settled = new Set<string>();
  /** The watch on the shown job's transcript file, and which file it is. */
  private transcriptWatch: { path: string; w: DirWatcher } | null = null;

  constructor(private readonly o: SyncOptions) {
    this.state = o.state;
    this.dash = o.dash;
    this.probe = o.probe ?? localProbe;
    this.maxAttempts = o.maxAttempts ?? 2;
    this.storedLogs = o.stored
      ? new StoredLogs(o.stored, (id) => {
          this.pendingJobs.add(id);
          this.schedule();
        })
      : null;
  }

  /** Whether a job's log is read from the shared store (job-log/store-source.ts logIsElsewhere). */
  private fromStore(job: Pick<Job, 'id' | 'host' | 'agent_sessions'>): boolean {
    return !!this.storedLogs && logIsElsewhere(this.state.dir, job, this.probe.host);
  }

  /** The first full load: every job of the scope, titles, staleness and the active jobs' logs. */
  loadAll(): void {
    this.version = this.state.jobs.version();
    const { repo } = this.dash.getState();
    // Finished jobs as their cards: the shown one is read whole (showWhole).
    const jobs = this.state.jobs.listCards(repo);
    this.briefs = null;
    this.beats.clear();
    this.dash.getState().setJobs(jobs);
    this.loadTitles(jobs);
    this.checkStale();
    this.refreshBacklog();
    this.settleStranded();
    for (const j of jobs) if (j.status === 'active') this.readLogs(j);
    // From here on the job the board shows is read whole as it comes into view.
    this.unsubscribeWhole ??= this.dash.subscribe((s) => this.readWhole(s));
    this.readWhole(this.dash.getState());
  }

  /** Starts watching (and the fallback poll). */
  start(): void {
    const dir = this.state.dir;
    // chokidar holds a file's change events back for 50 ms after one it let
    // through, which alone can double the time a runner's write takes to reach
    // the board (bench/dashboard.bench.js). The database is an entry of this
    // very directory, so a plain fs.watch on it sees its writes at once;
    // chokidar covers it where fs.watch fails (or once it does).
    try {
      this.dbWatcher = watchDir(dir, (_event, name) => {
        if (name?.startsWith('state.db')) this.onPath(join(dir, name));
      });
      this.dbWatcher.on('error', () => {
        this.dbWatcher?.close();
        this.dbWatcher = null;
      });
    } catch {
      this.dbWatcher = null;
    }
    const allowed = (p: string) => {
      const rel = relative(dir, p).split(sep).join('/');
      if (rel === '') return true;
      // Not while the fs.watch above sees them: chokidar's lstat and event for
      // each of a write's files (the database, its WAL and shared memory)
      // told the board what it already knew, ~2 ms of CPU per write with
      // 10,000 todos (bench/scale.bench.js). Asked on each event.
      if (rel.startsWith('state.db')) return this.dbWatcher === null;
      // Not the transcripts: every line an agent streams is a write there, and
      // only the shown job's are read (followTranscript watches that one).
      return /^jobs(\/[^/]+(\/events\.jsonl)?)?$/.test(rel);
    };
    this.watcher = watch(dir, {
      ignoreInitial: true,
      depth: 3,
      ignored: (p: string) => !allowed(p),
    });
    this.watcher.on('all', (_event, path) => this.onPath(path));
    this.watcher.on('error', () => {});
    this.poll = setInterval(() => this.tick(), this.o.pollMs ?? 1000);
    this.poll.unref();
    // A job coming into view gets its transcript read (from near its end) and
    // the lines it was not drawn with; the one going out of view lets its
    // transcript go, so a board with many agents streaming holds and parses
    // one transcript, not all of them.
    this.shown = shownJobId(this.dash.getState());
    this.unsubscribe = this.dash.subscribe((s) => {
      const id = shownJobId(s);
      if (id === this.shown) return;
      const was = this.shown;
      this.shown = id;
      if (was) this.leaveView(was);
      const job = id ? s.jobs.find((j) => j.id === id) : undefined;
      // Only a running job has a live pane (components/Dashboard.tsx).
      if (job?.status === 'active') this.readLogs(job);
      else this.followTranscript(null);
      if (id && this.liveBehind.has(id)) this.drawLive(id);
    });
  }

  /**
   * Reads the whole record of the job the board comes to show when the list
   * holds its card (model/job-card.ts): its changes' commits, for the
   * changes and commits boards, the detail and the keys. One job by its key,
   * synchronously, so the frame the key draws already has it.
   */
  private readWhole(s: ReturnType<DashboardStore['getState']>): void {
    const id = shownJobId(s);
    // Every change of the store comes here: the list is looked through only when it or the shown job changed.
    if (id === this.whole.id && s.jobs === this.whole.jobs) return;
    this.whole = { id, jobs: s.jobs };
    const entry = id ? s.jobs.find((j) => j.id === id) : undefined;
    if (!entry || isWholeJob(entry)) return;
    if (s.shown?.id === entry.id && s.shown.updated_at === entry.updated_at) return;
    s.setShown(this.state.jobs.get(entry.id));
  }

  /** Resolves once the watcher has scanned the state dir (events before that may be missed). */
  ready(): Promise<void> {
    const w = this.watcher;
    if (!w) return Promise.resolve();
    return new Promise((resolve) => w.once('ready', () => resolve()));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.unsubscribeWhole?.();
    this.unsubscribeWhole = null;
    this.followTranscript(null);
    if (this.liveTimer) clearTimeout(this.liveTimer);
    for (const t of this.recordTimers.values()) clearTimeout(t);
    this.recordTimers.clear();
    if (this.timer) clearTimeout(this.timer);
    if (this.lead) clearImmediate(this.lead);
    if (this.poll) clearInterval(this.poll);
    this.dbWatcher?.close();
    this.dbWatcher = null;
    await this.watcher?.close();
    this.watcher = null;
    await this.storedLogs?.close();
  }

  private onPath(path: string): void {
    const rel = relative(this.state.dir, path).split(sep);
    if (rel[0]?.startsWith('state.db')) this.pendingDb = true;
    else if (rel[0] === 'jobs' && rel[1]) this.pendingJobs.add(rel[1]);
    else return;
    this.schedule();
  }

  /**
   * Applies pending changes at once (after this turn's other file events),
   * then holds later events for a window of debounceMs and applies them
   * together at its end. A read of the database at once can be too early: a
   * write's last file event comes just before SQLite publishes the
   * transaction (in its shared-memory index, which sends no event), so such
   * a read can see the old state with nothing left to announce the new. So
   * every read the database's events caused is checked by another one at the
   * window's end (a version read, when nothing more was written). Waiting out
   * the window before the first read instead was 20 of the ~60 ms another
   * process's new todo took to reach the board (bench/scale.bench.js).
   */
  private schedule(): void {
    if (this.timer || this.lead || this.closed) return;
    this.lead = setImmediate(() => {
      this.lead = null;
      this.applyAndHold();
    });
  }

  /** Applies what is pending, and opens the window that holds the next events (and checks this read). */
  private applyAndHold(): void {
    if (this.closed) return;
    const db = this.pendingDb;
    this.flush();
    this.recheckDb = db;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.pendingDb || this.pendingJobs.size) this.applyAndHold();
      else if (this.recheckDb && !this.closed) {
        this.recheckDb = false;
        this.refreshJobs();
      }
    }, this.o.debounceMs ?? 20);
  }

  /** Applies everything pending now (tests and the benchmark call it to skip the debounce). */
  flush(): void {
    if (this.closed) return;
    if (this.pendingDb) {
      this.pendingDb = false;
      this.refreshJobs();
    }
    if (!this.pendingJobs.size) return;
    const ids = [...this.pendingJobs];
    this.pendingJobs.clear();
    // Only when a job's logs were written: another process's new todo came
    // here too, and mapping 1,000 jobs for nothing was ~450 KB of garbage
    // per todo (bench/scale.bench.js).
    const byId = new Map(this.dash.getState().jobs.map((j) => [j.id, j]));
    for (const id of ids) {
      const job = byId.get(id);
      if (job) this.readLogs(job);
    }
  }

  /**
   * Reloads the jobs written since the version the board reflects, when the
   * database changed. Every job mutation (heartbeats too) stamps the job with
   * the store version its transaction commits, so this needs no clock: the
   * version is read before the jobs, and a write landing in between is
   * loaded now and again next time, never missed.
   * test/unit/dashboard-sync.test.ts checks every kind of mutation gets through.
   */
  refreshJobs(): void {
    const v = this.state.jobs.version();
    if (v === this.version) return;
    const after = this.version;
    this.version = v;
    const { repo } = this.dash.getState();
    const changed = this.state.jobs.listChangedAfter(after, repo);
    if (changed.length) this.briefs = null;
    this.dash.getState().mergeJobs(this.withoutBeats(changed));
    this.loadTitles(changed);
    this.checkStale();
    this.refreshBacklog();
    for (const j of changed) this.readLogs(j);
  }

  /**
   * The changed jobs less those whose only change since the board's copy is
   * their heartbeat: those are kept in this.beats, for the staleness check,
   * and not drawn (no view shows a heartbeat). Every running job beats every
   * 5 s, so with 24 jobs each beat redrew the whole board a few times a second
   * for nothing, and a keypress's frame waited behind one now and then.
   */
  private withoutBeats(changed: BoardJob[]): BoardJob[] {
    if (changed.length === 0) return changed;
    const listed = this.dash.getState().jobs;
    const drawn: BoardJob[] = [];
    for (const j of changed) {
      const prev = listed.find((x) => x.id === j.id);
      // A card listed (loadAll) is compared with the card of the record read.
      const like = prev && !isWholeJob(prev) && isWholeJob(j) ? toJobCard(j) : j;
      if (prev && prev.heartbeat_at !== j.heartbeat_at && sameBut(prev, like)) this.beats.set(j.id, j);
      else {
        this.beats.delete(j.id);
        drawn.push(j);
      }
    }
    return drawn;
  }

  /** A listed job with its latest heartbeat (withoutBeats). */
  private beating(j: BoardJob): BoardJob {
    return this.beats.get(j.id) ?? j;
  }

  /** [run] max-attempts as the board decides by it (its default until the config is read). */
  get maxAttemptsNow(): number {
    return this.maxAttempts;
  }

  /** [run] max-attempts, once the config is read: the Backlog column is rebuilt by it. */
  setMaxAttempts(n: number): void {
    this.maxAttempts = n;
    this.backlogKey = '';
    this.refreshBacklog();
  }

  /**
   * Rebuilds the Backlog column when a todo changed or a job started, ended
   * or went stale (what readiness depends on), not on every heartbeat: with
   * thousands of todos a rebuild is not free, and running jobs write often.
   * When only todos changed, only they (and the todos that depend on them)
   * are decided again and put in their place (updateBacklog): the rest of the
   * column, and the cards built from it, stay as they are.
   */
  refreshBacklog(): void {
    const { repo, jobs, stale } = this.dash.getState();
    if (!repo) return;
    // Whether the live runners land decides whether an unlanded dep blocks:
    // the board decides as the runner that will start the todo does.
    const lands = this.refreshRunner(repo);
    const key = `lands:${lands}|max:${this.maxAttempts}|${this.jobsKey(repo, jobs, stale)}`;
    // Read before the todos: a write landing in between is read now and again next time.
    const version = this.state.jobs.version();
    const sameJobs = key === this.backlogKey;
    // Nothing written since the todos were read, and the jobs as they were: the poll's usual tick.
    if (sameJobs && this.todos?.repo === repo && this.todos.version === version) return;
    this.backlogKey = key;
    const read = this.readTodos(repo, version);
    const changed = read?.changed ?? null;
    if (sameJobs && changed?.size === 0) return;
    if (this.briefs?.repo !== repo) this.briefs = { repo, list: this.state.jobs.briefs(repo) };
    const o = {
      maxAttempts: this.maxAttempts,
      isStale: (j: JobBrief) => stale[j.id] === true,
      ...(lands ? { depsLanded: true } : {}),
    };
    const todos = this.todos!.byId;
    const prev = this.planned;
    const plan =
      sameJobs && changed && prev?.repo === repo && prev.plan === this.dash.getState().backlog
        ? updateBacklog(prev.plan, todos, changed, this.briefs.list, o, read!.index)
        : backlog([...todos.values()], this.briefs.list, o);
    this.planned = { repo, plan };
    this.dash.getState().setBacklog(plan);
  }

  /**
   * What of the jobs the Backlog column depends on, as text, kept per jobs
   * list and stale map (both are replaced when they change): each of
   * another process's new todos built it again from every job (1,000 in
   * bench/scale.bench.js's backlog, ~200 KB of string per todo).
   */
  private jobsKey(repo: string, jobs: readonly BoardJob[], stale: Record<string, boolean>): string {
    const held = this.jobsKeyOf;
    if (held?.jobs === jobs && held.stale === stale && held.repo === repo) return held.key;
    let key = '';
    // A landing (landed) makes a dependent ready under a landing runner.
    for (const j of jobs)
      if (j.repo === repo) key += `|${j.id}:${j.status}${j.landed ? 'L' : ''}${stale[j.id] ? '!' : ''}`;
    this.jobsKeyOf = { repo, jobs, stale, key };
    return key;
  }

  /**
   * Reads the repository's todos into this.todos: all of them the first time,
   * then only those written since (by store version, read before the todos,
   * so a write landing in between is read now and again next time, never
   * missed); returns the ids read again, or null when all were. The check
   * is checkTodoCount's, on the poll.
   */
  private readTodos(repo: string, version: number): { changed: Set<string>; index: BacklogIndex } | null {
    const held = this.todos;
    if (held && held.repo === repo) {
      const changed = new Set<string>();
      const was = new Map<string, Todo>();
      for (const t of this.state.todos.listChangedAfter(repo, held.version)) {
        const old = held.byId.get(t.id);
        if (old) {
          if (!was.has(t.id)) was.set(t.id, old);
          link(held.dependents, old, false);
        }
        link(held.dependents, t, true);
        held.byId.set(t.id, t);
        changed.add(t.id);
      }
      held.version = version;
      this.todoCountDue = true;
      return { changed, index: { was, dependents: (id) => held.dependents.get(id) } };
    }
    const all = this.state.todos.list(repo);
    const dependents = new Map<string, Set<string>>();
    for (const t of all) link(dependents, t, true);
    this.todos = { repo, version, byId: new Map(all.map((t) => [t.id, t])), dependents };
    this.todoCountDue = false;
    return null;
  }

  /**
   * The check of what readTodos read since its last full read: todos are
   * never deleted, so a count (the stamp's) that differs from what is held
   * means something was missed, and all are read again. On the poll, not on
   * each write: counting 10,000 todos was ~10 ms of the ~60 another
   * process's new todo took to reach the board (bench/scale.bench.js).
   */
  private checkTodoCount(): void {
    const held = this.todos;
    if (!this.todoCountDue || !held) return;
    this.todoCountDue = false;
    if (String(held.byId.size) !== this.state.todos.stamp(held.repo).split('|')[0]) this.todos = null;
  }

  private tick(): void {
    this.refreshJobs();
    this.checkStale();
    this.checkTodoCount();
    this.refreshBacklog();
    this.settleStranded();
    // Catch file events the watcher missed (a job dir created after its watch was set up).
    for (const j of this.dash.getState().jobs) if (j.status === 'active') this.readLogs(j);
    // A quiet agent writes nothing to wake the pane: the clock does.
    const id = shownJobId(this.dash.getState());
    const logs = id ? this.logs.get(id) : undefined;
    if (id && logs && this.silenceOf(logs) !== logs.silence) {
      this.liveBehind.add(id);
      this.drawLiveSoon();
    }
  }

  /** The shown pane's quiet-agent line now (null while the agent talks, or is not working). */
  private silenceOf(logs: JobLogs): string | null {
    return logs.agentStage ? silenceLine(quietSince(logs.entries), (this.o.now ?? Date.now)()) : null;
  }

  private checkStale(): void {
    const now = Date.now();
    const stale: Record<string, boolean> = {};
    for (const j of this.dash.getState().jobs)
      if (j.status === 'active' && isStale(this.beating(j), now, this.probe)) stale[j.id] = true;
    this.dash.getState().setStale(stale);
    for (const id of Object.keys(stale)) this.reap(id);
  }

  /** Hands SyncOptions.settle each todo in progress with no job on it whose last job's runner (this machine's) is gone. */
  private settleStranded(): void {
    const todos = this.todos;
    if (!this.o.settle || !todos) return;
    for (const j of strandedJobs([...todos.byId.values()], this.dash.getState().jobs)) {
      if (j.host !== this.probe.host || j.pid === null || this.probe.pidAlive(j.pid)) continue;
      if (this.settled.has(j.id)) continue;
      this.settled.add(j.id);
      void this.o
        .settle(j.id)
        .catch(() => {})
        .finally(() => {
          if (!this.closed) this.refreshJobs();
        });
    }
  }

  /** Hands a stale job to SyncOptions.reap, unless it is there already; reloads the jobs after. */
  private reap(id: string): void {
    const found = this.o.reap ? this.dash.getState().jobs.find((j) => j.id === id) : undefined;
    const listed = found && this.beating(found);
    if (!listed || this.reaping.has(id)) return;
    // The cleanup is given the whole record (the board may hold its card).
    const job = isWholeJob(listed) ? listed : this.state.jobs.get(id);
    if (!job) return;
    this.reaping.add(id);
    void this.o.reap!(job)
      .catch(() => {}) // shown stale still; the next check tries again
      .finally(() => {
        this.reaping.delete(id);
        if (!this.closed) this.refreshJobs();
      });
  }

  private loadTitles(jobs: readonly BoardJob[]): void {
    const known = this.dash.getState().todoTitles;
    const titles: Record<string, string> = {};
    for (const j of jobs) {
      if (known[j.todo_id] || titles[j.todo_id]) continue;
      const t = this.state.todos.get(j.repo, j.todo_id);
      if (t) titles[j.todo_id] = t.title;
    }
    if (Object.keys(titles).length) this.dash.getState().setTitles(titles);
  }

  /** The repository's live backlog runners (a dead one's record is left for its next start to ignore). */
  /** Reads the live backlog runners into the store; whether they land (runnersLand), null when none runs. */
  private refreshRunner(repo: string): boolean | null {
    const now = Date.now();
    const live = this.state.runners.list(repo).filter((r) => runnerAlive(r, now, this.probe));
    const lands = runnersLand(live);
    const here = live.filter((r) => r.host === this.probe.host);
    // +/- change this machine's runners (slots are per machine); with none here, the others'.
    const changed = here.length ? here : live;
    const hosts = new Map<string, number>();
    for (const r of live) hosts.set(r.host, Math.max(hosts.get(r.host) ?? 1, r.slots));
    this.dash.getState().setRunner(
      live.length
        ? {
            ids: changed.map((r) => r.id),
            localPids: here.map((r) => r.pid),
            slots: Math.max(...changed.map((r) => r.slots)),
            hosts: [...hosts].map(([host, slots]) => ({ host, slots })),
            lands: lands === true,
          }
        : null,
    );
    return lands;
  }

  /** Reads what was appended to a job's event log and latest transcript, and updates its pane and files. */
  private readLogs(job: BoardJob): void {
    let logs = this.logs.get(job.id);
    if (!logs) {
      const remote = this.fromStore(job);
      // An ended job of another machine has no live pane: its log is not
      // followed (`l` reads the store when asked), nor read again on each of its writes.
      if (remote && job.status !== 'active') return;
      // Nor is a running one's until the board shows it: what its log gives
      // (the pane's lines, its files) is drawn for the shown job only, and
      // following every remote job's streams was a query and a parse per
      // append (5 a second per job) with 16 remote jobs streaming
      // (bench/shared-store.bench.js). It is read whole when it comes into view.
      if (remote && shownJobId(this.dash.getState()) !== job.id) return;
      const stored = remote ? this.storedLogs!.get(job.id) : null;
      logs = {
        events: stored
          ? new StoredStreamTail(stored, { events: true }, JobEvent)
          : tailEvents(this.state.dir, job.id),
        stored,
        earlier: [],
        eventLines: [],
        transcriptPath: null,
        transcript: null,
        entries: [],
        header: [],
        agentStage: false,
        silence: null,
        readAny: false,
      };
      this.logs.set(job.id, logs);
    }
    logs.agentStage = job.status === 'active' && job.stage !== 'testing';
    // What an ended job's held copy has is read below, for the last time.
    if (logs.stored && job.status !== 'active') this.storedLogs!.release(job.id);
    let changed = false;
    const s = this.dash.getState();
    const read = logs.events.read();
    if (read.length) logs.readAny = true;
    else if (!logs.readAny && !logs.transcript) {
      // Nothing logged yet (a job just claimed, or one whose log is gone), and
      // not the shown job's: hold no reader for it. 10,000 jobs' idle readers
      // were megabytes of the board's memory; the next read starts afresh,
      // at the start of the log, which is where this one still was.
      if (shownJobId(s) !== job.id || job.status !== 'active') {
        this.logs.delete(job.id);
        return;
      }
    }
    for (const l of read) {
      if (!l.ok) {
        // Another process wrote something that is not an event: say so, trust none of it.
        logs.eventLines.push({
          type: null,
          line: { kind: 'warning', spans: [{ text: `events.jsonl line ${l.n} skipped: ${l.error}` }] },
        });
        changed = true;
        continue;
      }
      const e = l.value;
      if (e.type === 'file_change') {
        const { ts: _ts, type: _type, ...file } = e;
        s.trackFile(job.id, file);
      }
      // An implement pass starts the next iteration: the status bar counts its files afresh.
      if (e.type === 'agent_start' && e.purpose === 'implement') s.startIteration(job.id);
      if (e.type === 'agent_start') {
        // A new turn: what the last one decided stays in view (a verdict is
        // followed at once by the next agent's start), the rest goes.
        const kept = logs.eventLines.filter(
          (x) => x.line.kind === 'fact' || x.line.kind === 'warning' || x.type === 'test_end',
        );
        logs.earlier = [...logs.earlier, ...kept.map((x) => logText(x.line))].slice(-EARLIER_LINES);
        logs.eventLines = [];
        changed = true;
      }
      const agent = e.type === 'warning' && e.agent_session_id !== undefined;
      for (const line of eventLines(e)) {
        logs.eventLines.push({ type: e.type, line, ...(agent ? { agent } : {}) });
        changed = true;
      }
    }
    if (logs.eventLines.length > 200) logs.eventLines = logs.eventLines.slice(-200);
    const latest = job.agent_sessions.at(-1);
    const path = latest
      ? latest.transcript.startsWith('/')
        ? latest.transcript
        : join(this.state.dir, latest.transcript)
      : null;
    // Only the shown job's transcript is read, while it runs: the live pane
    // shows no other (components/Dashboard.tsx).
    const shown = shownJobId(s) === job.id && job.status === 'active';
    if (!shown) {
      if (logs.transcript) this.dropTranscript(job.id);
      if (shownJobId(s) === job.id) this.followTranscript(null); // it just ended
    } else if (path !== logs.transcriptPath || !logs.transcript) {
      logs.transcriptPath = path;
      logs.transcript =
        logs.stored && latest
          ? new StoredStreamTail(logs.stored, { transcript: latest.id })
          : path
            ? new JsonLinesTail(path, undefined, { lastBytes: TRANSCRIPT_TAIL_BYTES })
            : null;
      logs.entries = [];
      changed = true;
    }
    if (shown) this.followTranscript(logs.stored ? null : logs.transcriptPath);
    if (logs.transcript) {
      const breaks = logs.transcript.breaks;
      const entries = logs.transcript.read().flatMap((l) => (l.ok ? [l.value] : []));
      // The file shrank (a capped transcript dropping its middle) or the
      // reader skipped ahead: what is held would repeat or run on across a gap.
      if (logs.transcript.breaks !== breaks) {
        logs.entries = [];
        changed = true;
      }
      if (entries.length) {
        logs.entries.push(...entries);
        if (logs.entries.length > TRANSCRIPT_ENTRIES) logs.entries = logs.entries.slice(-TRANSCRIPT_ENTRIES);
        changed = true;
      }
    }
    if (!changed) return;
    // A log a view has loaded (l, the commit detail) follows the job.
    if (s.records[job.id]) this.rereadRecordSoon(job.id);
    logs.header = latest ? [`● agent: ${latest.purpose} (${latest.id.slice(0, 8)})`] : [];
    this.liveBehind.add(job.id);
    if (shownJobId(s) === job.id) this.drawLiveSoon();
  }

  /** How many jobs' log readers are held: those whose event log gave a line, and the shown one's. */
  readersHeld(): number {
    return this.logs.size;
  }

  /** How many jobs' transcripts are held (read and kept): at most the shown one's. */
  transcriptsHeld(): number {
    let n = 0;
    for (const l of this.logs.values()) if (l.transcript) n++;
    return n;
  }

  /**
   * A job leaving the view: its transcript is let go, and a job of another
   * machine's whole log too (readLogs reads it again from the store when it
   * comes back): only the shown job's log is followed there.
   */
  private leaveView(jobId: string): void {
    const logs = this.logs.get(jobId);
    if (!logs?.stored) return this.dropTranscript(jobId);
    this.logs.delete(jobId);
    this.storedLogs!.release(jobId);
    this.liveBehind.add(jobId);
  }

  /** Lets a job's transcript go when it leaves the view (it is read again, from near its end, when it comes back). */
  private dropTranscript(jobId: string): void {
    const logs = this.logs.get(jobId);
    if (!logs?.transcript) return;
    logs.transcript = null;
    logs.transcriptPath = null;
    logs.entries = [];
    this.liveBehind.add(jobId);
  }

  /**
   * Watches the shown job's transcript file (fs.watch: each write is seen at
   * once, and only this one file's writes). A file not there yet is picked up
   * by the poll, which reads the shown job's logs again.
   */
  private followTranscript(path: string | null): void {
    if (this.closed) path = null;
    if (this.transcriptWatch?.path === path) return;
    this.transcriptWatch?.w.close();
    this.transcriptWatch = null;
    if (!path) return;
    try {
      const w = watchDir(path, () => {
        const id = shownJobId(this.dash.getState());
        if (!id) return;
        this.pendingJobs.add(id);
        this.schedule();
      });
      w.on('error', () => {});
      this.transcriptWatch = { path, w };
    } catch {
      // Not there yet (or not watchable): the poll reads it.
    }
  }

  /**
   * Reads a loaded job log (l, the commit detail) again, at most once per
   * RECORD_GAP_MS and never more often than RECORD_COST_GAPS times its last
   * read took: a whole log near the transcript cap takes seconds to read, and
   * reading it on every streamed line kept several copies alive at once
   * under a flooding agent.
   */
  private rereadRecordSoon(jobId: string): void {
    if (this.recordTimers.has(jobId) || this.closed) return;
    const last = this.recordReads.get(jobId) ?? { at: -Infinity, tookMs: 0 };
    const wait = last.at + Math.max(RECORD_GAP_MS, last.tookMs * RECORD_COST_GAPS) - performance.now();
    const read = () => {
      this.recordTimers.delete(jobId);
      const job = this.state.jobs.get(jobId);
      if (!job || this.closed || !this.dash.getState().records[jobId]) return;
      const stored = this.storedLogs?.peek(jobId) ?? null;
      // A job of another machine gone from view is no longer followed: its record stays as read.
      if (!stored && this.fromStore(job)) return;
      const at = performance.now();
      this.dash.getState().setRecord(jobId, readJobRecord(this.state.dir, job, stored));
      this.recordReads.set(jobId, { at, tookMs: performance.now() - at });
    };
    if (wait <= 0) read();
    else this.recordTimers.set(jobId, setTimeout(read, wait));
  }

  /** Draws the shown job's pane now, or once LIVE_DRAW_MS have passed since the last draw. */
  private drawLiveSoon(): void {
    if (this.liveTimer || this.closed) return;
    const wait = this.lastLiveDraw + LIVE_DRAW_MS - performance.now();
    const draw = () => {
      this.liveTimer = null;
      const id = shownJobId(this.dash.getState());
      if (id && this.liveBehind.has(id) && !this.closed) this.drawLive(id);
    };
    if (wait <= 0) draw();
    else this.liveTimer = setTimeout(draw, wait);
  }

  /** Draws a job's live lines from what its logs hold. */
  private drawLive(jobId: string): void {
    this.lastLiveDraw = performance.now();
    const logs = this.logs.get(jobId);
    // A job of another machine just come into view: its pane keeps what it
    // showed until the store's copy of its log is read (not drawn empty meanwhile).
    if (logs?.stored && !logs.stored.readOnce) return;
    this.liveBehind.delete(jobId);
    if (!logs) return;
    const body = transcriptText(logs.entries).filter((l) => !l.startsWith('>'));
    const after = logs.eventLines
      .filter((x) => !x.agent)
      .map((x) => logText(x.line))
      .filter((l) => !l.startsWith('● agent'));
    logs.silence = this.silenceOf(logs);
    const quiet = logs.silence ? [logs.silence] : [];
    this.dash.getState().setLive(jobId, [...logs.earlier, ...logs.header, ...body, ...after, ...quiet]);
  }
}
