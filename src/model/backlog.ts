// The backlog: which todos can run now, in what order, and what holds back
// the others. Pure: the store hands in the todos and a brief of their jobs,
// so `ii todo list`, `ii run`, the claim transaction and the board all
// decide the same way.
import type { JobStage, JobStatus } from './job.js';
import type { Todo, TodoStatus } from './todo.js';

/** What the backlog needs to know of a job (JobStore.briefs). */
export interface JobBrief {
  id: string;
  todo_id: string;
  status: JobStatus;
  stage: JobStage;
  started_at: string;
  completed_at: string | null;
  pid: number | null;
  host: string | null;
  heartbeat_at: string | null;
  updated_at: string;
  cost: number;
  /** Iterations (commits) in the job's current change. */
  iteration: number;
  /** Completed with commits that were never landed (ii job land): its work is not on the branch yet. */
  unlanded: boolean;
  /** Made at least one commit (iteration) in any of its changes. */
  committed: boolean;
}

/**
 * A dep's state as a blocker: the todo's status, or how its last job ended
 * while it is open again; 'unlanded': done, but its commits are not on the
 * branch yet (only when deps must land first).
 */
export type DepState = TodoStatus | 'failed' | 'abandoned' | 'missing' | 'unlanded';

export type Blocker =
  | { kind: 'dep'; dep_id: string; title: string | null; state: DepState }
  /** stale: its runner is gone (ii job retry runs the todo again). */
  | { kind: 'job'; job_id: string; stale: boolean }
  /** failures: failed and abandoned together, each kind counted too (a person is told which). */
  | { kind: 'attempts'; failures: number; failed: number; abandoned: number };

export interface BlockedTodo {
  todo: Todo;
  blockers: Blocker[];
}

export interface Backlog {
  /** Open todos that can run now, in run order (priority 0 first, then oldest). */
  ready: Todo[];
  /** Open todos that cannot, in run order, each with what holds it back. */
  blocked: BlockedTodo[];
  /**
   * Ready todos (by id) with deps that are done but not landed, those deps'
   * ids: ready when deps need not land first (depsLanded unset), but a job
   * started now would not see the deps' work on the branch, which a person
   * should know. Only todos that have some are keys.
   */
  unlanded: Record<string, string[]>;
}

export interface BacklogOptions {
  /** Failed or abandoned jobs since the todo was last reopened that keep it from running ([run] max-attempts). */
  maxAttempts: number;
  /** Whether an active job's runner is gone (isStale with a probe); absent: none is. */
  isStale?: (job: JobBrief) => boolean;
  /**
   * A dep counts as done only once its commits landed (ii run --land): a
   * dependent job starts from the branch, so it would not see them before.
   * The one readiness rule for ii run and the board: the board passes what
   * the live runners do (model/backlog-runner.ts runnersLand).
   */
  depsLanded?: boolean;
}

/** Run order: priority (0 first), then oldest, then id (a stable tie-break). */
export function byRunOrder(a: Todo, b: Todo): number {
  return (
    a.priority - b.priority ||
    (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

const ENDED_BADLY: ReadonlySet<JobStatus> = new Set(['failed', 'abandoned']);

/** Jobs of a todo that failed, and that were abandoned, since it was last reopened. */
export function failedAttempts(
  todo: Pick<Todo, 'id' | 'reopened_at'>,
  jobs: readonly JobBrief[],
): { failed: number; abandoned: number } {
  const out = { failed: 0, abandoned: 0 };
  for (const j of jobs)
    if (
      j.todo_id === todo.id &&
      ENDED_BADLY.has(j.status) &&
      (todo.reopened_at == null || j.started_at > todo.reopened_at)
    )
      out[j.status === 'failed' ? 'failed' : 'abandoned']++;
  return out;
}

/** The jobs of each todo, so readiness looks at a todo's own jobs, not every job once per todo. */
type JobsByTodo = ReadonlyMap<string, readonly JobBrief[]>;

function jobsByTodo(jobs: readonly JobBrief[]): JobsByTodo {
  const out = new Map<string, JobBrief[]>();
  for (const j of jobs) {
    const list = out.get(j.todo_id);
    if (list) list.push(j);
    else out.set(j.todo_id, [j]);
  }
  return out;
}

const NONE: readonly JobBrief[] = [];

/** Why an open todo cannot run now; empty when it can. */
export function blockersOf(
  todo: Todo,
  byId: ReadonlyMap<string, Todo>,
  jobs: readonly JobBrief[],
  o: BacklogOptions,
): Blocker[] {
  return blockersIndexed(todo, byId, jobsByTodo(jobs), o);
}

function blockersIndexed(
  todo: Todo,
  byId: ReadonlyMap<string, Todo>,
  jobs: JobsByTodo,
  o: BacklogOptions,
): Blocker[] {
  const out: Blocker[] = [];
  for (const d of todo.deps) {
    const dep = byId.get(d);
    if (!dep) out.push({ kind: 'dep', dep_id: d, title: null, state: 'missing' });
    else if (dep.status !== 'done')
      out.push({ kind: 'dep', dep_id: d, title: dep.title, state: depState(dep, jobs.get(dep.id) ?? NONE) });
    else if (o.depsLanded && !landed(jobs.get(dep.id) ?? NONE))
      out.push({ kind: 'dep', dep_id: d, title: dep.title, state: 'unlanded' });
  }
  const own = jobs.get(todo.id) ?? NONE;
  for (const j of own)
    if (j.status === 'active') out.push({ kind: 'job', job_id: j.id, stale: o.isStale?.(j) ?? false });
  const { failed, abandoned } = failedAttempts(todo, own);
  if (failed + abandoned >= o.maxAttempts)
    out.push({ kind: 'attempts', failures: failed + abandoned, failed, abandoned });
  return out;
}

/** The todo's deps that are done but whose work is not on the branch yet. */
function unlandedDeps(todo: Todo, byId: ReadonlyMap<string, Todo>, jobs: JobsByTodo): string[] {
  return todo.deps.filter((d) => byId.get(d)?.status === 'done' && !landed(jobs.get(d) ?? NONE));
}

/** Whether a done todo's work is on the branch: no completed job of it left commits unlanded. */
function landed(jobs: readonly JobBrief[]): boolean {
  let completed = false;
  for (const j of jobs) {
    if (j.status !== 'completed') continue;
    if (!j.unlanded) return true;
    completed = true;
  }
  // Done with no completed job (by hand): nothing of it waits to land.
  return !completed;
}

/** `dep`'s state as a blocker, from the dep's own jobs. */
function depState(dep: Todo, jobs: readonly JobBrief[]): DepState {
  if (dep.status !== 'open') return dep.status;
  // An open dep whose last job failed or was abandoned says so: "open" alone
  // would hide why the dependent todo is still waiting.
  let last: JobBrief | undefined;
  for (const j of jobs) if (!last || j.started_at > last.started_at) last = j;
  return last && (last.status === 'failed' || last.status === 'abandoned') ? last.status : 'open';
}

/**
 * The open todos of a repository split into ready (run order) and blocked.
 * Linear in todos and jobs (the board rebuilds it over 10,000 todos when one
 * changes: bench/scale.bench.js).
 */
export function backlog(todos: readonly Todo[], jobs: readonly JobBrief[], o: BacklogOptions): Backlog {
  const byId = new Map(todos.map((t) => [t.id, t]));
  const byTodo = jobsByTodo(jobs);
  const ready: Todo[] = [];
  const blocked: BlockedTodo[] = [];
  const unlanded: Record<string, string[]> = {};
  // Only the open ones sorted: in a repository with a history most are done.
  for (const t of todos.filter((x) => x.status === 'open').sort(byRunOrder)) {
    const blockers = blockersIndexed(t, byId, byTodo, o);
    if (blockers.length === 0) {
      ready.push(t);
      // Under depsLanded these are blockers, so a ready todo has none.
      const waiting = t.deps.length && !o.depsLanded ? unlandedDeps(t, byId, byTodo) : [];
      if (waiting.length) unlanded[t.id] = waiting;
    } else blocked.push({ todo: t, blockers });
  }
  return { ready, blocked, unlanded };
}

/**
 * `prev` (backlog() of the same jobs and options) after the todos named in
 * `changed` were written (made, edited, moved, closed, or gone from `todos`):
 * the same result as backlog() over all of `todos`, in O(n) without sorting.
 * Only those todos and the todos that depend on them are decided again (a
 * todo's blockers look at its deps and its own jobs, and the jobs are
 * unchanged); the rest keep their place and their objects, so what the board
 * built from them is kept too. With 10,000 todos, sorting all of them again
 * and building every card anew on each new todo was most of the time it took
 * to reach the board (bench/scale.bench.js).
 */
export function updateBacklog(
  prev: Backlog,
  todos: ReadonlyMap<string, Todo>,
  changed: ReadonlySet<string>,
  jobs: readonly JobBrief[],
  o: BacklogOptions,
  index?: BacklogIndex,
): Backlog {
  if (changed.size === 0) return prev;
  const again = new Set(changed);
  if (index) for (const id of changed) for (const d of index.dependents(id) ?? []) again.add(d);
  else for (const t of todos.values()) if (t.deps.some((d) => changed.has(d))) again.add(t.id);
  let ready: Todo[];
  let blocked: BlockedTodo[];
  if (index) {
    // Each todo decided again is found where it was (by binary search, as it
    // was before the write), not by going through every entry.
    const fromReady: number[] = [];
    const fromBlocked: number[] = [];
    for (const id of again) {
      const old = changed.has(id) ? index.was.get(id) : todos.get(id);
      if (!old || old.status !== 'open') continue;
      let r = placeOf(prev.ready, old, (t) => t);
      let b = r < 0 ? placeOf(prev.blocked, old, (x) => x.todo) : -1;
      // Not where its order puts it (an object other than the one decided): found by its id.
      if (r < 0 && b < 0) {
        r = prev.ready.findIndex((t) => t.id === id);
        if (r < 0) b = prev.blocked.findIndex((x) => x.todo.id === id);
      }
      if (r >= 0) fromReady.push(r);
      if (b >= 0) fromBlocked.push(b);
    }
    ready = without(prev.ready, fromReady);
    blocked = without(prev.blocked, fromBlocked);
  } else {
    ready = prev.ready.filter((t) => !again.has(t.id));
    blocked = prev.blocked.filter((b) => !again.has(b.todo.id));
  }
  // The same record while no entry changes (a todo without deps, the usual
  // new one): the board compares the column's by identity first, and copying
  // a thousand entries on each write was garbage per todo.
  let unlanded = prev.unlanded;
  const own = () => (unlanded === prev.unlanded ? (unlanded = { ...prev.unlanded }) : unlanded);
  for (const id of again) if (Object.hasOwn(prev.unlanded, id)) delete own()[id];
  // Only the jobs of the todos decided again, and of their deps.
  const mine = new Set<string>();
  for (const id of again) {
    mine.add(id);
    for (const d of todos.get(id)?.deps ?? []) mine.add(d);
  }
  const byTodo = jobsByTodo(jobs.filter((j) => mine.has(j.todo_id)));
  for (const id of again) {
    const t = todos.get(id);
    if (!t || t.status !== 'open') continue;
    const blockers = blockersIndexed(t, todos, byTodo, o);
    if (blockers.length === 0) {
      ready.splice(
        insertAt(ready, t, (x) => x),
        0,
        t,
      );
      const waiting = t.deps.length && !o.depsLanded ? unlandedDeps(t, todos, byTodo) : [];
      if (waiting.length) own()[t.id] = waiting;
    } else
      blocked.splice(
        insertAt(blocked, t, (b) => b.todo),
        0,
        { todo: t, blockers },
      );
  }
  return { ready, blocked, unlanded };
}

/**
 * What the caller of updateBacklog knows of the todos, so that it need not
 * go through all of them (with 10,000 todos that was most of its time): the
 * todos that depend on each todo, and each changed todo as it was when
 * `prev` was decided (the very object; absent for a new todo).
 */
export interface BacklogIndex {
  dependents: (id: string) => Iterable<string> | undefined;
  was: ReadonlyMap<string, Todo>;
}

/** Where `t` (the very object) is in a list kept in run order, or -1. */
function placeOf<T>(list: readonly T[], t: Todo, todoOf: (x: T) => Todo): number {
  const i = insertAt(list, t, todoOf);
  return i < list.length && todoOf(list[i]!) === t ? i : -1;
}

/** A copy of `list` without the entries at `at`. */
function without<T>(list: readonly T[], at: number[]): T[] {
  const out = list.slice();
  for (const i of [...new Set(at)].sort((a, b) => b - a)) out.splice(i, 1);
  return out;
}

/** Where `t` goes in a list kept in run order (byRunOrder is total: ids break ties). */
function insertAt<T>(list: readonly T[], t: Todo, todoOf: (x: T) => Todo): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (byRunOrder(todoOf(list[mid]!), t) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One blocker as a line: what it is and what to do about it. */
export function describeBlocker(b: Blocker): string {
  switch (b.kind) {
    case 'dep':
      return `waits for ${b.dep_id}${b.title !== null ? ` "${b.title}"` : ''} (${depWords(b.state)})`;
    case 'job':
      return b.stale
        ? `held by job ${b.job_id}, whose runner is gone: ii job retry ${b.job_id} runs it again`
        : `held by job ${b.job_id} (ii job show ${b.job_id})`;
    case 'attempts':
      return `${attemptWords(b)}; ii todo reopen to try again`;
  }
}

/** "its jobs failed 2 times", "1 job failed and 1 was abandoned": each kind as it was. */
export function attemptWords(b: { failed: number; abandoned: number }): string {
  const times = (n: number) => `${n} time${n === 1 ? '' : 's'}`;
  if (!b.abandoned) return `its jobs failed ${times(b.failed)}`;
  if (!b.failed) return `its jobs were abandoned ${times(b.abandoned)}`;
  const jobs = (n: number) => `${n} job${n === 1 ? '' : 's'}`;
  return `${jobs(b.failed)} failed and ${b.abandoned} ${b.abandoned === 1 ? 'was' : 'were'} abandoned`;
}

function depWords(state: DepState): string {
  if (state === 'in_progress') return 'in progress';
  if (state === 'unlanded') return 'done, not landed yet';
  return state;
}

/**
 * Whether a claim for a job on `todoId` may go ahead, decided inside the
 * claim's transaction: null, or why not. 'ready' (ii run) wants the todo
 * ready; 'manual' (ii job do, ii job retry: a person chose this todo) only
 * wants no other job holding it and the todo not closed.
 */
export function claimRefusal(
  todoId: string,
  todos: readonly Todo[],
  jobs: readonly JobBrief[],
  o: BacklogOptions & { mode: 'ready' | 'manual' },
): string | null {
  const byId = new Map(todos.map((t) => [t.id, t]));
  const todo = byId.get(todoId);
  if (!todo) return `no todo ${todoId} in this repository: ii todo list shows them.`;
  const holder = jobs.find((j) => j.todo_id === todoId && j.status === 'active');
  if (holder)
    return `todo ${todoId} already has a job, ${holder.id} (${holder.stage}). Watch it with ii job show ${holder.id}, or stop it with ii job abandon ${holder.id}.`;
  if (todo.status === 'closed') return `todo ${todoId} is closed; reopen it first: ii todo reopen ${todoId}`;
  if (o.mode === 'manual') return null;
  if (todo.status !== 'open')
    return `todo ${todoId} is ${todo.status === 'in_progress' ? 'in progress' : todo.status}, not open.`;
  const blockers = blockersOf(todo, byId, jobs, o);
  return blockers.length ? `todo ${todoId} is not ready: ${blockers.map(describeBlocker).join('; ')}.` : null;
}

/**
 * The first cycle that making `id` depend on `deps` would close, as ids from
 * `id` back to it (a → b → a), or null. `depsOf` gives the current deps.
 */
export function depCycle(
  id: string,
  deps: readonly string[],
  depsOf: (id: string) => readonly string[],
): string[] | null {
  const seen = new Set<string>();
  const walk = (at: string, path: string[]): string[] | null => {
    if (at === id) return [...path, at];
    if (seen.has(at)) return null;
    seen.add(at);
    for (const next of depsOf(at)) {
      const found = walk(next, [...path, at]);
      if (found) return found;
    }
    return null;
  };
  for (const d of deps) {
    const found = walk(d, [id]);
    if (found) return found;
  }
  return null;
}
