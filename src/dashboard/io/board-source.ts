// What the board reads, synchronously (io/sync.ts, the actions' question
// texts): the SQLite StateStore itself, or, on a shared PostgreSQL store, a
// copy in memory kept up to date from the store's asynchronous API as
// LISTEN/NOTIFY tells of each committed version. The SQLite path stays as it
// was (no await between a file event and the frame: bench/dashboard.bench.js);
// the copy holds only what the board asks for: the scope's jobs, their
// todos' titles, the repository's todos, job briefs and runners.
import type { JobBrief } from '../../model/backlog.js';
import type { BacklogRunnerRecord } from '../../model/backlog-runner.js';
import type { Job } from '../../model/job.js';
import type { BoardJob } from '../../model/job-card.js';
import type { Todo } from '../../model/todo.js';
import type { JobStore, RunnerStore, TodoStore } from '../../state/api.js';
import type { AsyncStateStore, BoardRead } from '../../state/async-api.js';

export interface BoardSource {
  readonly dir: string;
  jobs: Pick<JobStore, 'version' | 'list' | 'listAll' | 'listChangedAfter' | 'get' | 'briefs'> & {
    /** JobStore.listCards; a copy that holds whole jobs gives those. */
    listCards(repo: string | null): BoardJob[];
  };
  todos: Pick<TodoStore, 'listChangedAfter' | 'stamp' | 'list' | 'get'>;
  runners: Pick<RunnerStore, 'list'>;
}

const todoKey = (repo: string, id: string) => `${repo}\0${id}`;

/**
 * The least time between the end of a refresh that read something and the
 * start of the next (ms): notices arriving meanwhile are read together. When
 * 24 jobs start at once every one of their writes is a notice, and reading
 * each on its own (up to ten queries, then the board's redraw) kept the
 * board busy through the burst: a key pressed then waited behind it
 * (bench/shared-store.bench.js, machine a's board). A notice after a quiet
 * spell is read at once.
 */
export const REFRESH_GAP_MS = 50;

/**
 * The board's copy of a shared store. Each held row carries the store
 * version of the refresh that read it, so listChangedAfter answers as the
 * store would (what was read after the version the board last saw). Refreshes
 * run one at a time; versions announced meanwhile make one more refresh
 * after it, not one each.
 */
export class StoreMirror implements BoardSource {
  readonly dir: string;
  private version = -1;
  private readonly jobsById = new Map<string, { job: Job; v: number }>();
  /** The scope's todos, and other repositories' todos the held jobs name (titles). */
  private readonly todosByKey = new Map<string, { todo: Todo; v: number }>();
  private readonly briefsOf = new Map<string, JobBrief[]>();
  private readonly runnersOf = new Map<string, BacklogRunnerRecord[]>();
  private running: Promise<void> | null = null;
  private again = false;
  /** The highest version a notice announced (committed, so readable), not read yet. */
  private noticed = -1;
  /** A refresh was asked for without a version (the board's own write): the store's is read. */
  private ask = false;
  /** When the last refresh that read something ended (REFRESH_GAP_MS). */
  private readAt = -Infinity;
  /** Ends the wait of a held refresh (the board's own write, close). */
  private wake: (() => void) | null = null;
  private stopWatch: (() => Promise<void>) | null = null;
  private closed = false;

  constructor(
    private readonly store: AsyncStateStore,
    /** The board's repository (slug), or null for every repository. */
    private readonly repo: string | null,
    /** Called after a refresh that read a newer version (the board reads the copy then). */
    private readonly onChange: () => void = () => {},
    /** Called with what a refresh threw (a lost connection: the watch says when it is back). */
    private readonly onError: (err: unknown) => void = () => {},
    /** REFRESH_GAP_MS (tests set it). */
    private readonly gapMs = REFRESH_GAP_MS,
  ) {
    this.dir = store.dir;
  }

  /** The first read: every job of the scope, the repository's todos, briefs and runners. */
  async load(): Promise<void> {
    const read = await this.read(-1, true);
    if (read) await this.apply(read, true);
  }

  /** Follows the store's versions (LISTEN/NOTIFY); a reconnect announces the current one and is read from the last seen. */
  async watch(): Promise<void> {
    if (!this.store.watch) throw new Error('this store cannot be watched');
    this.stopWatch = await this.store.watch((v) => {
      if (v !== this.version) void this.refresh(v);
    });
    // What was committed between load() and the watch's start.
    void this.refresh();
  }

  /**
   * Reads what was written after the version held; one at a time, coalescing
   * calls made meanwhile, and no sooner than gapMs after the last one that
   * read something. `committed`: a version a notice announced, which the read
   * takes as the store's instead of asking for it (a notice is delivered at
   * its COMMIT, and versions commit in order: meta's row is locked from the
   * version's taking to COMMIT, pg/db.ts tx).
   */
  refresh(committed?: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (committed === undefined) {
      this.ask = true;
      this.wake?.();
    } else if (committed > this.noticed) this.noticed = committed;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async () => {
      do {
        // Not the board's own write (ask): its key waits for it.
        const wait = this.ask ? 0 : this.readAt + this.gapMs - performance.now();
        if (wait > 0)
          await new Promise<void>((r) => {
            const t = setTimeout(r, wait);
            this.wake = () => {
              clearTimeout(t);
              r();
            };
          });
        this.wake = null;
        if (this.closed) break;
        // What was asked for during the wait is read now.
        this.again = false;
        try {
          if ((await this.readChanges()) && !this.closed) {
            this.readAt = performance.now();
            this.onChange();
          }
        } catch (err) {
          if (!this.closed) this.onError(err);
        }
      } while (this.again && !this.closed);
      this.running = null;
    };
    this.running = run();
    return this.running;
  }

  /** Whether anything newer was read. */
  private async readChanges(): Promise<boolean> {
    // A notice's version saves asking for it (one query of the few each
    // refresh costs where the store reads in steps); a call without one (the
    // board's own write) asks.
    const noticed = this.ask ? -1 : this.noticed;
    this.noticed = -1;
    this.ask = false;
    const read = await this.read(this.version, false, noticed > this.version ? noticed : undefined);
    if (!read || read.version === this.version) return false;
    await this.apply(read, false);
    return true;
  }

  /**
   * What was written after `after` (-1: everything): in one round trip where
   * the store can (readBoard), else in steps. Null when the store's version
   * is still the one held (read in steps only: one round trip reads it all).
   */
  private async read(after: number, wholeBriefs: boolean, version?: number): Promise<BoardRead | null> {
    if (this.store.readBoard) return this.store.readBoard(this.repo, after, wholeBriefs);
    const { jobs, todos, runners } = this.store;
    // Read before the rows: a write landing in between is read now and again next time.
    const v = version ?? (await jobs.version());
    if (after >= 0 && v === after) return null;
    const r = this.repo;
    const changed =
      after < 0 ? await (r ? jobs.list(r) : jobs.listAll()) : await jobs.listChangedAfter(after, r);
    return {
      version: v,
      jobs: changed,
      todos: r ? await (after < 0 ? todos.list(r) : todos.listChangedAfter(r, after)) : [],
      // Only the changed jobs' briefs: read whole, each write (a heartbeat
      // too) read the repository's whole history again (jobs are never deleted).
      briefs: !r
        ? null
        : wholeBriefs
          ? await jobs.briefs(r)
          : changed.length
            ? await jobs.briefsChangedAfter(r, after)
            : [],
      // A runner's start, slots and heartbeat are writes too: read with every version.
      runners: r ? await runners.list(r) : null,
    };
  }

  /** Takes in a read: its rows carry its version, and the titles of its jobs' todos not held are read. */
  private async apply(read: BoardRead, whole: boolean): Promise<void> {
    const v = read.version;
    for (const t of read.todos)
      // With no repository, only titles are held, and only those of todos not held yet are read.
      if (this.repo || !this.todosByKey.has(todoKey(t.repo, t.id))) this.setTodo(t, v);
    for (const job of read.jobs) {
      this.jobsById.set(job.id, { job, v });
      if (this.todosByKey.has(todoKey(job.repo, job.todo_id))) continue;
      const t = await this.store.todos.get(job.repo, job.todo_id);
      if (t) this.setTodo(t, v);
    }
    // Only the board's repository has a Backlog column (every repository's
    // briefs on every write would be the whole store's jobs again and again).
    const r = this.repo;
    if (r && read.briefs) {
      const held = this.briefsOf.get(r);
      if (whole || !held) this.briefsOf.set(r, read.briefs);
      else if (read.briefs.length) {
        const ids = new Set(read.briefs.map((b) => b.id));
        this.briefsOf.set(r, [...held.filter((b) => !ids.has(b.id)), ...read.briefs]);
      }
    }
    if (r && read.runners) this.runnersOf.set(r, read.runners);
    this.version = v;
  }

  private setTodo(t: Todo, v: number): void {
    this.todosByKey.set(todoKey(t.repo, t.id), { todo: t, v });
  }

  /**
   * Stops following the store. A refresh under way is not waited for: its
   * read may wait on a lock or on a server that stopped answering for as long
   * as that lasts, and the store's close() that follows cuts it (PgDb.close);
   * closed, it reports nothing and changes nothing shown.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.stopWatch?.();
    this.stopWatch = null;
  }

  readonly jobs: BoardSource['jobs'] = {
    version: () => this.version,
    list: (repo) => this.heldJobs().filter((j) => j.repo === repo),
    listAll: () => this.heldJobs(),
    // The copy holds whole jobs anyway: cards would save nothing here.
    listCards: (repo) => (repo ? this.jobs.list(repo) : this.heldJobs()),
    listChangedAfter: (after, repo) => {
      const out: Job[] = [];
      for (const { job, v } of this.jobsById.values())
        if (v > after && (repo == null || job.repo === repo)) out.push(job);
      return out;
    },
    get: (id) => this.jobsById.get(id)?.job ?? null,
    briefs: (repo) => this.briefsOf.get(repo) ?? [],
  };

  readonly todos: BoardSource['todos'] = {
    listChangedAfter: (repo, after) => {
      const out: Todo[] = [];
      for (const { todo, v } of this.todosByKey.values()) if (v > after && todo.repo === repo) out.push(todo);
      return out;
    },
    // The board compares only its count (todos are never deleted).
    stamp: (repo) => `${this.heldTodos(repo).length}|${this.version}`,
    // Only the board's repository's todos are all held (others only as the titles of jobs):
    // another repository lists none, so nothing is decided from a part of its todos.
    list: (repo, filter) =>
      repo !== this.repo
        ? []
        : this.heldTodos(repo).filter((t) => !filter?.status || t.status === filter.status),
    get: (repo, id) => this.todosByKey.get(todoKey(repo, id))?.todo ?? null,
  };

  readonly runners: BoardSource['runners'] = {
    list: (repo) => this.runnersOf.get(repo) ?? [],
  };

  /** Newest first, as the store lists them. */
  private heldJobs(): Job[] {
    return [...this.jobsById.values()]
      .map((x) => x.job)
      .sort((a, b) => b.started_at.localeCompare(a.started_at) || a.id.localeCompare(b.id));
  }

  private heldTodos(repo: string): Todo[] {
    return [...this.todosByKey.values()].map((x) => x.todo).filter((t) => t.repo === repo);
  }
}
