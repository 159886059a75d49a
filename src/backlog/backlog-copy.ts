// What `ii run` decides on at each look (scheduler.ts tick): every todo of
// the repository and a brief of each of its jobs. Read whole at every look,
// that was the repository's whole history again on every write to the store
// (a look follows each one, up to one per 15 ms): with 1,000 jobs and 1,000
// todos, 12 ms of reads a look, in a process that runs at the person's own
// priority beside the jobs. Kept here instead, and brought up to date with
// what was written after the store version last read: one query for the
// version when nothing was written, the changed rows when something was.
// Nothing is ever deleted from either table, so the copy is whole.
import { byRunOrder, type JobBrief } from '../model/backlog.js';
import type { Todo } from '../model/todo.js';
import type { AsyncStateStore } from '../state/async-api.js';

export interface BacklogRead {
  /** Every brief of the repository's jobs, as of the read. */
  briefs: JobBrief[];
  /** Every todo of the repository, in run order (priority, then age: the store's order too). */
  todos: Todo[];
}

export class BacklogCopy {
  private version: number | null = null;
  private readonly briefsById = new Map<string, JobBrief>();
  private readonly todosById = new Map<string, Todo>();
  private last: BacklogRead | null = null;

  constructor(
    private readonly store: Pick<AsyncStateStore, 'jobs' | 'todos'>,
    private readonly repo: string,
  ) {}

  /**
   * The briefs, then the todos, each read after the one before: a claim
   * writes its job and its todo in one transaction, so a todo shown claimable
   * here was claimed in no earlier read (scheduler.ts relies on it). The
   * version is read first: a write landing after it is read now and again
   * next time, never missed (versions commit in order in both drivers).
   */
  async read(): Promise<BacklogRead> {
    const v = await this.store.jobs.version();
    // Whole at the first read, and if the version went back (a store put back
    // from a copy under a running ii run): what changed is then unknown.
    if (this.version === null || this.last === null || v < this.version) {
      // Unset until both reads are in: one that throws leaves the next look to read whole.
      this.version = null;
      this.briefsById.clear();
      this.todosById.clear();
      const briefs = await this.store.jobs.briefs(this.repo);
      const todos = await this.store.todos.list(this.repo);
      for (const b of briefs) this.briefsById.set(b.id, b);
      for (const t of todos) this.todosById.set(t.id, t);
      this.version = v;
      this.last = { briefs, todos };
      return this.last;
    }
    if (v === this.version) return this.last;
    const after = this.version;
    const briefs = await this.store.jobs.briefsChangedAfter(this.repo, after);
    const todos = await this.store.todos.listChangedAfter(this.repo, after);
    for (const b of briefs) this.briefsById.set(b.id, b);
    for (const t of todos) this.todosById.set(t.id, t);
    this.version = v;
    // New arrays only for what changed: a caller may hold the last ones, and
    // compares them to know whether to decide the backlog again.
    this.last = {
      briefs: briefs.length ? [...this.briefsById.values()] : this.last.briefs,
      todos: todos.length ? [...this.todosById.values()].sort(byRunOrder) : this.last.todos,
    };
    return this.last;
  }
}
