// The three kanban boards as plain data (columns of cards), derived from the
// store's state with src/model/derive.ts. Pure and memoized on the inputs'
// identity, so a frame that changes nothing on the board rebuilds nothing.
import {
  CHANGE_COLUMNS,
  COMMIT_COLUMNS,
  changeColumn,
  commitColumn,
  commitOutcome,
  JOB_COLUMNS,
  jobColumn,
  noCommitNote,
} from '../../model/derive.js';
import { byRunOrder, type BlockedTodo, type Blocker } from '../../model/backlog.js';
import { NO_CHANGES } from '../../model/todo-outcome.js';
import type { Job, JobChange, JobCommit } from '../../model/job.js';
import { isWholeJob, iterationsOf, type BoardJob } from '../../model/job-card.js';
import { shortJobId } from '../../model/job-id.js';
import { formatCost } from '../../model/usage.js';
import type { Todo } from '../../model/todo.js';
import type { BacklogState, BoardLevel, DashboardState, Mark } from './state.js';
import { count } from './count.js';
import { visibleLine } from '../../text/sanitize.js';
import { shownLine, shownLines } from '../../text/shown.js';
import { waitText } from '../../model/waiting.js';
import { askMarker, NEEDS_YOU, openAsk, waitingJobs } from './needs-you.js';

export type Tone = 'ok' | 'bad' | 'warn' | 'dim' | 'active' | null;

export interface CardData {
  key: string;
  title: string;
  detail: string;
  tone: Tone;
  stale: boolean;
  /**
   * The title's width as shown, when the card's maker measured it (todo
   * cards): the board checks every card's title against its column's width
   * on each change, and looking 10,000 up was ~2 ms of a new todo's way to
   * the board (components/Board.tsx).
   */
  titleWidth?: number;
}

export interface ColumnData {
  title: string;
  cards: CardData[];
}

const FINISHED = new Set(['Completed', 'Landed', 'Failed', 'Abandoned']);

/** A card's cost, after its place; none before anything is spent. */
const money = (c: number) => (c > 0 ? ` ${formatCost(c)}` : '');

/**
 * A failed job's reason on one line: its first line (the rest, such as what
 * to do, is in the job's detail), shown escaped and redacted.
 */
export function reasonLine(job: Pick<Job, 'failure_reason' | 'status'>): string {
  const first = (job.failure_reason ?? '').split('\n').find((l) => l.trim()) ?? '';
  return first ? shownLine(first.trim()) : `the job ${job.status}`;
}

/** Why an iteration has no review when its job ended before one: the failure reason, or null. */
function noReviewWhy(job: Job, change: number, iteration: number): string | null {
  const ch = job.changes[change];
  const c = ch?.commits[iteration];
  const last = change === job.changes.length - 1 && iteration === (ch?.commits.length ?? 0) - 1;
  if (!c || c.review || !last || job.status !== 'failed') return null;
  return `no review: ${reasonLine(job)}`;
}

/** Whether a job matches the filter text (id, todo, title, stage, status). */
export function jobMatches(job: BoardJob, title: string, filter: string): boolean {
  if (!filter) return true;
  const f = filter.toLowerCase();
  return [job.id, job.todo_id, title, job.stage, job.status, job.failure_reason ?? ''].some((s) =>
    s.toLowerCase().includes(f),
  );
}

/**
 * Where a completed job's landing stands, for its card: landed, stopped in a
 * conflict, under way (its last recorded step), refused; null when it was
 * never landed. Agent-made text (file names, git's messages) shown escaped.
 */
export function landingLine(
  job: Pick<Job, 'landed' | 'land_conflict' | 'landing' | 'to_land'>,
): string | null {
  if (job.landed) return `landed on ${shownLine(job.landed.onto)} ${job.landed.commit.slice(0, 7)}`;
  if (job.land_conflict) return `conflict: ${job.land_conflict.files.map((f) => shownLine(f)).join(', ')}`;
  const l = job.landing;
  // Started by ii run --land: the next landing runner lands it.
  if (!l) return job.to_land ? 'to land' : null;
  // A refusal keeps git's lines in the record; a card has one.
  const step = l.step
    .split('\n')
    .map((x) => x.trim())
    .filter(Boolean)
    .join(' ');
  return l.state === 'landing' ? `landing: ${shownLine(step)}` : `not landed: ${shownLine(step)}`;
}

export function jobCard(job: BoardJob, title: string, stale: boolean): CardData {
  // Each change's iterations (its commits): a card of a finished job holds only these.
  const iterations = iterationsOf(job);
  // The change being made, or the one being committed (already complete).
  const last = iterations.at(-1);
  const landing = job.status === 'completed' ? landingLine(job) : null;
  const where =
    job.status === 'active'
      ? `${job.stage}${last !== undefined ? ` · c${iterations.length}${last ? ` i${last}` : ''}` : ''}`
      : job.status === 'failed'
        ? reasonLine(job)
        : // Completed having made nothing: its todo is done, but nothing was made (nor is there anything to land).
          job.status === 'completed' && iterations.every((n) => n === 0)
          ? `done · ${NO_CHANGES}`
          : (landing ?? count(iterations.filter((n) => n > 0).length, 'change'));
  const ask = openAsk(job);
  // The time it waited for a person so far (its finished requests): not agent time.
  const waited = job.waited_ms >= 1000 ? ` · waited ${waitText(job.waited_ms)}` : '';
  const tone: Tone = stale
    ? 'warn'
    : ask
      ? 'warn'
      : job.status === 'failed' || job.landing?.state === 'refused'
        ? 'bad'
        : job.land_conflict
          ? 'warn'
          : job.status === 'completed'
            ? 'ok'
            : job.status === 'abandoned'
              ? 'dim'
              : 'active';
  return {
    key: job.id,
    // The title leads: at 80 columns a card is a dozen characters wide, and
    // the todo's title is what tells jobs apart; the id comes last.
    title: `${stale ? '⚠ STALE ' : ''}${shownTitle(title)}`,
    // A waiting job's card says what it asks before anything else.
    detail: `${ask ? askMarker(ask) : where}${waited}${money(job.usage.cost)} · ${shortJobId(job.id)}`,
    tone,
    stale,
  };
}

/**
 * shownLine of a card's text, kept: the board builds every card again on a
 * change (10,000 todos), and redacting each title again was most of the time
 * another process's new todo took to reach the Backlog column
 * (bench/scale.bench.js). Mostly the text itself comes back (nothing to
 * redact or escape), so the cache holds little more than its keys.
 */
const shownTitles = new Map<string, string>();
function shownTitle(s: string): string {
  let v = shownTitles.get(s);
  if (v === undefined) {
    if (shownTitles.size >= 50_000) shownTitles.clear();
    v = shownLine(s);
    shownTitles.set(s, v);
  }
  return v;
}

/** The Backlog column's title (a repository's jobs board only). */
export const BACKLOG = 'Backlog';

/** A todo card's key: todo ids and job ids never meet on one board. */
export const TODO_KEY = 'todo:';

/** One blocker in the few words a card has room for (ii todo list says it whole). */
export function blockerWords(b: Blocker): string {
  switch (b.kind) {
    case 'dep':
      return b.state === 'unlanded'
        ? `waits for ${b.dep_id} to land`
        : `waits for ${b.dep_id} (${b.state === 'in_progress' ? 'in progress' : b.state})`;
    case 'job':
      return b.stale ? `held by stale job ${shortJobId(b.job_id)}` : `held by job ${shortJobId(b.job_id)}`;
    case 'attempts':
      // Each kind as it was: an abandoned job did not fail.
      return `${[...(b.failed ? [`failed ${b.failed}×`] : []), ...(b.abandoned ? [`abandoned ${b.abandoned}×`] : [])].join(', ')}: ii todo reopen`;
  }
}

/**
 * A ready todo's deps that completed but have not landed, in a few words: no
 * runner that lands runs, so it is ready, but a job started now would not
 * see their work on the branch (under ii run --land it waits for them).
 */
export function unlandedWords(deps: readonly string[]): string {
  return deps.length === 1 ? `${deps[0]} not landed` : `deps ${deps.join(', ')} not landed`;
}

export function todoCard(todo: Todo, blockers: Blocker[] | null, unlanded: readonly string[] = []): CardData {
  const what = `p${todo.priority} ${todo.type} · ${todo.id}`;
  const note = unlanded.length ? ` · ${unlandedWords(unlanded)}` : '';
  const title = shownTitle(todo.title);
  return {
    key: `${TODO_KEY}${todo.id}`,
    title,
    titleWidth: visibleLine(title).length,
    detail: blockers
      ? `blocked: ${blockers.map((b) => shownTitle(blockerWords(b))).join('; ')}`
      : `ready${note} · ${what}`,
    tone: blockers ? 'dim' : null,
    stale: false,
  };
}

/**
 * Each todo's card as last built, by the todo (a ready one, with its
 * unlanded deps) or by its blocked entry: a column of 10,000 todos that
 * changed in one place (model/backlog.ts updateBacklog keeps the other
 * entries) builds one card, not 10,000.
 */
const readyCards = new WeakMap<Todo, { unlanded: readonly string[] | undefined; card: CardData }>();
const blockedCards = new WeakMap<BlockedTodo, CardData>();

function readyCard(t: Todo, unlanded: readonly string[] | undefined): CardData {
  const held = readyCards.get(t);
  if (held && held.unlanded === unlanded) return held.card;
  const card = todoCard(t, null, unlanded);
  readyCards.set(t, { unlanded, card });
  return card;
}

function blockedCard(b: BlockedTodo): CardData {
  let card = blockedCards.get(b);
  if (!card) blockedCards.set(b, (card = todoCard(b.todo, b.blockers)));
  return card;
}

/** The Backlog column per backlog and filter (the job columns change far more often). */
const backlogColumns = new WeakMap<BacklogState, { filter: string; column: ColumnData }>();

/**
 * The last Backlog column built without a filter, and from what: the next
 * one (updateBacklog keeps the entries it did not decide again, in order)
 * takes those entries' cards from it by walking both in step, instead of
 * looking each of 10,000 todos up (bench/scale.bench.js).
 */
let lastBacklog: { backlog: BacklogState; column: ColumnData } | null = null;

/** Ready todos in run order, then the blocked ones, each saying what holds it; filtered like the jobs. */
function buildBacklog(s: DashboardState): ColumnData {
  const held = backlogColumns.get(s.backlog);
  if (held && held.filter === s.nav.filter) return held.column;
  const column = {
    title: BACKLOG,
    cards: !s.nav.filter && lastBacklog ? backlogCardsFrom(s.backlog, lastBacklog) : backlogCards(s),
  };
  backlogColumns.set(s.backlog, { filter: s.nav.filter, column });
  if (!s.nav.filter) lastBacklog = { backlog: s.backlog, column };
  return column;
}

function backlogCards(s: DashboardState): CardData[] {
  const f = s.nav.filter.toLowerCase();
  const keep = (t: Todo) => !f || t.title.toLowerCase().includes(f) || t.id.includes(f);
  // A Map: looking a stored id up in a record's keys hashes it into V8's string table each time.
  const unlanded = new Map(Object.entries(s.backlog.unlanded ?? {}));
  const cards: CardData[] = [];
  for (const t of s.backlog.ready) if (keep(t)) cards.push(readyCard(t, unlanded.get(t.id)));
  for (const b of s.backlog.blocked) if (keep(b.todo)) cards.push(blockedCard(b));
  return cards;
}

/**
 * The unfiltered cards of `b`, those of entries `last` had taken from its
 * column: both lists are in run order (byRunOrder is total), so one walk
 * through each finds the entries kept, and only the others are looked up.
 */
function backlogCardsFrom(b: BacklogState, last: { backlog: BacklogState; column: ColumnData }): CardData[] {
  const was = last.backlog;
  const lastCards = last.column.cards;
  const unlanded = b.unlanded ?? {};
  const wasUnlanded = was.unlanded ?? {};
  // The todos whose unlanded deps differ (few): a record looked up by each
  // of 10,000 ids hashes each into V8's string table.
  // Not when the record is the one the last column had (updateBacklog keeps it while no entry changed).
  const differ = new Set<string>();
  if (unlanded !== wasUnlanded) {
    for (const id of Object.keys(unlanded)) if (unlanded[id] !== wasUnlanded[id]) differ.add(id);
    for (const id of Object.keys(wasUnlanded)) if (unlanded[id] !== wasUnlanded[id]) differ.add(id);
  }
  // Made at its length: pushed into, a 10,000-card array was copied as it grew.
  const cards = new Array<CardData>(b.ready.length + b.blocked.length);
  let n = 0;
  let j = 0;
  for (const t of b.ready) {
    while (j < was.ready.length && was.ready[j] !== t && byRunOrder(was.ready[j]!, t) < 0) j++;
    const same = j < was.ready.length && was.ready[j] === t;
    if (same && (differ.size === 0 || !differ.has(t.id))) cards[n++] = lastCards[j]!;
    else cards[n++] = readyCard(t, unlanded[t.id]);
    if (same) j++;
  }
  const base = was.ready.length;
  let k = 0;
  for (const x of b.blocked) {
    while (k < was.blocked.length && was.blocked[k] !== x && byRunOrder(was.blocked[k]!.todo, x.todo) < 0)
      k++;
    if (k < was.blocked.length && was.blocked[k] === x) cards[n++] = lastCards[base + k++]!;
    else cards[n++] = blockedCard(x);
  }
  return cards;
}

/**
 * The job columns (and the waiting jobs' cards) per job list, kept while
 * what they show is unchanged: a new todo rebuilds the Backlog column alone.
 */
const jobColumnMemos = new WeakMap<
  BoardJob[],
  { key: unknown[]; value: { asking: CardData[]; jobs: ColumnData[] } }
>();

function buildJobs(s: DashboardState): ColumnData[] {
  const key = [s.stale, s.todoTitles, s.nav.filter, s.nav.showFinished];
  let memo = jobColumnMemos.get(s.jobs);
  if (!memo || !memo.key.every((v, i) => v === key[i])) {
    memo = { key, value: jobColumns(s) };
    jobColumnMemos.set(s.jobs, memo);
  }
  const { asking, jobs } = memo.value;
  // Shown once there is a backlog: an empty one would be noise on a newcomer's first screen.
  const hasBacklog = s.backlog.ready.length + s.backlog.blocked.length > 0;
  const board = hasBacklog ? [buildBacklog(s), ...jobs] : jobs;
  // Needs you leads, left of everything, while some job waits: it is what a
  // person must act on. Absent otherwise, as the Backlog is: an always-empty
  // column would take a sixth of an 80-column board for nothing.
  return asking.length ? [{ title: NEEDS_YOU, cards: asking }, ...board] : board;
}

function jobColumns(s: DashboardState): { asking: CardData[]; jobs: ColumnData[] } {
  const cols = new Map<string, CardData[]>(JOB_COLUMNS.map((c) => [c, []]));
  const asking: CardData[] = [];
  // The longest-waiting first: the order y and n go through them (the inbox).
  for (const job of waitingJobs(s.jobs)) {
    const title = s.todoTitles[job.todo_id] ?? job.todo_id;
    if (jobMatches(job, title, s.nav.filter)) asking.push(jobCard(job, title, s.stale[job.id] === true));
  }
  for (const job of s.jobs) {
    if (openAsk(job)) continue;
    const title = s.todoTitles[job.todo_id] ?? job.todo_id;
    if (!jobMatches(job, title, s.nav.filter)) continue;
    const col = jobColumn(job);
    if (!s.nav.showFinished && FINISHED.has(col)) continue;
    cols.get(col)!.push(jobCard(job, title, s.stale[job.id] === true));
  }
  const jobs = JOB_COLUMNS.filter((c) => s.nav.showFinished || !FINISHED.has(c)).map((title) => ({
    title,
    cards: cols.get(title)!,
  }));
  return { asking, jobs };
}

export function changeCard(job: Job, change: JobChange, index: number): CardData {
  const last = change.commits.at(-1);
  const col = changeColumn(change, job);
  return {
    key: String(index),
    title: `#${index + 1} ${visibleLine(change.change_id.slice(0, 9))}`,
    detail:
      col === 'Failed'
        ? `${change.commits.length} iter · job failed: ${reasonLine(job)}`
        : `${change.commits.length} iter · ${last ? commitOutcome(last) : noCommitNote(job)}`,
    tone: col === 'Committed' ? 'ok' : col === 'Failed' ? 'bad' : col === 'Abandoned' ? 'dim' : 'active',
    stale: false,
  };
}

function buildChanges(job: Job | undefined): ColumnData[] {
  const cols = new Map<string, CardData[]>(CHANGE_COLUMNS.map((c) => [c, []]));
  job?.changes.forEach((ch, i) => cols.get(changeColumn(ch, job))!.push(changeCard(job, ch, i)));
  return CHANGE_COLUMNS.map((title) => ({ title, cards: cols.get(title)! }));
}

export function commitCard(
  commit: JobCommit,
  index: number,
  marked = false,
  /** Why it has no review (its job failed first), shown instead of its outcome. */
  noReview: string | null = null,
): CardData {
  const subject = shownLines(commit.draft_message)[0] || '(no message yet)';
  const adds = commit.files.reduce((n, f) => n + f.additions, 0);
  const dels = commit.files.reduce((n, f) => n + f.deletions, 0);
  return {
    key: String(index),
    // The marked iteration (m) says so on its card: d diffs others against it.
    title: `${marked ? '◆ marked · ' : ''}i${index + 1} ${commit.commit_id.slice(0, 7)} ${subject}`,
    detail: `${count(commit.files.length, 'file')} +${adds} -${dels} · ${
      noReview
        ? `${commit.tests_passed === false ? 'tests failed · ' : ''}${noReview}`
        : commitOutcome(commit)
    }`,
    tone:
      commit.review?.outcome === 'ACCEPT'
        ? 'ok'
        : commit.review || commit.tests_passed === false
          ? 'bad'
          : 'active',
    stale: false,
  };
}

function buildCommits(job: Job | undefined, changeIndex: number | null, mark: Mark | null): ColumnData[] {
  const cols = new Map<string, CardData[]>(COMMIT_COLUMNS.map((c) => [c, []]));
  const change = job && changeIndex != null ? job.changes[changeIndex] : undefined;
  if (job && change && changeIndex != null) {
    const n = change.commits.length;
    change.commits.forEach((c, i) => {
      const marked = mark?.jobId === job.id && mark.change === changeIndex + 1 && mark.iteration === i + 1;
      cols
        .get(commitColumn(c, { isCurrent: i === n - 1 && changeIndex === job.changes.length - 1, job }))!
        .push(commitCard(c, i, marked, noReviewWhy(job, changeIndex, i)));
    });
  }
  return COMMIT_COLUMNS.map((title) => ({ title, cards: cols.get(title)! }));
}

/** The job a level is about: the drilled-into one. */
export const drilledJob = (s: DashboardState): Job | undefined =>
  s.nav.jobId ? wholeJob(s, s.nav.jobId) : undefined;

/**
 * A listed job's whole record: its entry when whole, else the record
 * io/sync.ts read when the board came to show it (DashboardState.shown);
 * undefined for a job not listed, or a card whose record is not read yet.
 */
export function wholeJob(s: Pick<DashboardState, 'jobs' | 'shown'>, id: string): Job | undefined {
  const j = s.jobs.find((x) => x.id === id);
  if (!j) return undefined;
  return isWholeJob(j) ? j : s.shown?.id === id ? s.shown : undefined;
}

/**
 * The last layout per job list, so each store (a dashboard, a test, a bench
 * beside it) keeps its own: one shared slot was rebuilt whenever two stores
 * took turns. Keyed on the list, which every store holds and replaces when
 * jobs change; a replaced list's entry goes with it.
 */
const memos = new WeakMap<BoardJob[], { key: unknown[]; value: ColumnData[] }>();

/** The columns of the board shown at the current level (the commits board under the detail level). */
export function boardColumns(s: DashboardState): ColumnData[] {
  const level = boardLevel(s);
  const key = [
    level,
    s.stale,
    s.todoTitles,
    s.nav.filter,
    s.nav.showFinished,
    s.nav.jobId,
    // The drilled job's whole record (a card's: DashboardState.shown); the
    // jobs board does not read it, and a cursor move there sets it.
    level === 'jobs' ? null : s.shown,
    s.nav.change,
    s.nav.mark,
    s.backlog,
  ];
  const memo = memos.get(s.jobs);
  if (memo && memo.key.every((v, i) => v === key[i])) return memo.value;
  const value =
    level === 'jobs'
      ? buildJobs(s)
      : level === 'changes'
        ? buildChanges(drilledJob(s))
        : buildCommits(drilledJob(s), s.nav.change, s.nav.mark);
  memos.set(s.jobs, { key, value });
  return value;
}

export const boardLevel = (s: DashboardState): BoardLevel =>
  s.nav.level === 'detail' ? 'commits' : s.nav.level;

/**
 * Where the cursor is on the current board: on its card wherever that card
 * moved (a job going from Testing to Reviewing keeps the cursor), else at the
 * same place, clamped to what exists.
 */
export function cursor(s: DashboardState): { col: number; row: number } {
  const cols = boardColumns(s);
  const sel = s.nav.sel[boardLevel(s)];
  if (sel.key != null) {
    const here = cols[sel.col]?.cards.findIndex((c) => c.key === sel.key) ?? -1;
    if (here >= 0) return { col: sel.col, row: here };
    for (let c = 0; c < cols.length; c++) {
      const r = cols[c]!.cards.findIndex((card) => card.key === sel.key);
      if (r >= 0) return { col: c, row: r };
    }
  }
  let col = Math.max(0, Math.min(sel.col, cols.length - 1));
  // An empty column holds no cursor: go to the nearest column with cards.
  if (!cols[col]?.cards.length) {
    for (let d = 1; d < cols.length; d++) {
      if (cols[col + d]?.cards.length) {
        col += d;
        break;
      }
      if (cols[col - d]?.cards.length) {
        col -= d;
        break;
      }
    }
  }
  const n = cols[col]?.cards.length ?? 0;
  return { col, row: Math.max(0, Math.min(sel.row, n - 1)) };
}

/** The card under the cursor of the current board, if any. */
export function selectedCard(s: DashboardState): CardData | undefined {
  const { col, row } = cursor(s);
  return boardColumns(s)[col]?.cards[row];
}

/** The job the keys act on: the drilled-into job, else the selected job card. */
/** The todo under the cursor (a card of the Backlog column), if any. */
export function selectedTodo(s: DashboardState): Todo | undefined {
  if (s.nav.level !== 'jobs') return undefined;
  const key = selectedCard(s)?.key;
  if (!key?.startsWith(TODO_KEY)) return undefined;
  const id = key.slice(TODO_KEY.length);
  return s.backlog.ready.find((t) => t.id === id) ?? s.backlog.blocked.find((b) => b.todo.id === id)?.todo;
}

export function selectedJob(s: DashboardState): Job | undefined {
  const id = shownJobId(s);
  return id ? wholeJob(s, id) : undefined;
}

/** The id of the job the keys act on (selectedJob), whole or a card: the one io/sync.ts reads whole. */
export function shownJobId(s: DashboardState): string | null {
  if (s.nav.level !== 'jobs') return s.nav.jobId;
  const key = selectedCard(s)?.key;
  return key && !key.startsWith(TODO_KEY) ? key : null;
}

/**
 * Job counts per status, for the status bar, kept per jobs array: the status bar's selector runs on every
 * store change, a keypress included, and counting 10,000 jobs each time was
 * CPU a keypress spent on counts that had not changed (the jobs array and the
 * stale map are new objects whenever a job changes).
 */
const counted = new WeakMap<readonly BoardJob[], { stale: Record<string, boolean>; value: JobCounts }>();

export interface JobCounts {
  active: number;
  stale: number;
  completed: number;
  failed: number;
  abandoned: number;
}

export function jobCounts(jobs: readonly BoardJob[], stale: Record<string, boolean>): JobCounts {
  const memo = counted.get(jobs);
  if (memo && memo.stale === stale) return memo.value;
  const value = countJobs(jobs, stale);
  counted.set(jobs, { stale, value });
  return value;
}

function countJobs(jobs: readonly BoardJob[], stale: Record<string, boolean>): JobCounts {
  const c = { active: 0, stale: 0, completed: 0, failed: 0, abandoned: 0 };
  for (const j of jobs) {
    if (j.status === 'active' && stale[j.id]) c.stale++;
    else c[j.status]++;
  }
  return c;
}
