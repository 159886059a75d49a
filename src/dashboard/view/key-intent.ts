// What a key press means, as data: given the board's state and a key, the
// intents it asks for (a screen move, a message, an action to carry out),
// in order. Pure, as gemini-cli's and lazygit's per-context key handlers
// are, so every key's meaning is tested without a store, git or a process;
// io/actions.ts only carries the intents out. The keymap (keymap.ts) stays
// the one table that says which key is which action in which mode.
import type { Job } from '../../model/job.js';
import { shortJobId } from '../../model/job-id.js';
import type { Todo } from '../../model/todo.js';
import { shownLine } from '../../text/shown.js';
import type { AskAnswer } from '../../model/permission-ask.js';
import { alwaysCovers, openAsk } from './needs-you.js';
import { blockerWords, selectedJob, selectedTodo } from './board.js';
import { diffRequest, diffTarget } from './diff-request.js';
import { bindingFor, keyName, modeOf, type ActionName, type KeyPress } from './keymap.js';
import type { LogMove } from './log-view.js';
import { reduceNav, type NavAction } from './nav.js';
import { iterationLabel, type Confirm, type DashboardState, type IterationId } from './state.js';
import { retryFate, retryRefusal } from './todo-fate.js';
import { FIELD_PROMPTS, formError } from './todo-form.js';

/** One thing a key press asks for; io/actions.ts carries each out, in order. */
export type Intent =
  /** A screen move: the nav reducer's action. */
  | { type: 'nav'; action: NavAction }
  /** The status line's message (null: the key hints again). */
  | { type: 'say'; text: string | null }
  | { type: 'abandon'; jobId: string; closeTodo?: boolean }
  | { type: 'retry'; jobId: string }
  | { type: 'askLand'; jobId: string }
  | { type: 'land'; jobId: string }
  /** The finished new-todo form is created. */
  | { type: 'createTodo' }
  | { type: 'startTodo'; todoId: string }
  | { type: 'closeTodo'; todoId: string }
  | { type: 'editTodo'; todoId: string }
  | { type: 'toggleRunner' }
  | { type: 'stopRunner' }
  | { type: 'changeSlots'; delta: number }
  | { type: 'loadDiff'; jobId: string; change: number; iteration: number; from?: IterationId | null }
  | { type: 'loadRecord'; jobId: string }
  /** A waiting job's request answered (the one with askId); then the next waiting job, as an inbox. */
  | { type: 'answer'; jobId: string; askId: number; answer: AskAnswer; note?: string }
  | { type: 'quit' };

/** What a key's meaning reads beyond the board's state: what the caller knows of the store and the terminal. */
export interface KeyFacts {
  /** Whether the board runs inside a repository (acting on its backlog needs one). */
  inRepo: boolean;
  /** A job's todo as the store has it now (the retry question says what becomes of it). */
  todoOf(job: Job): Todo | undefined;
  /** What abandoning the job does to its todo, for the question ('' when it cannot be told). */
  todoAfterAbandon(job: Job): string;
}

/** What a key that acts on the backlog says outside a repository. */
export const NO_BACKLOG = 'the backlog is a repository’s: run ii dashboard inside one (not --all)';

/** What a "no" to each question says. */
const NOTHING_DONE: Record<Confirm['kind'], string> = {
  abandon: 'nothing abandoned',
  retry: 'nothing retried',
  land: 'nothing landed',
  start: 'nothing started',
  closeTodo: 'nothing closed',
  stopRunner: 'the runner goes on',
  allowAlways: 'nothing answered: the job still waits',
};

/** The pager keys' moves in the log. */
const LOG_MOVES: Record<'scrollUp' | 'scrollDown' | 'pageUp' | 'pageDown' | 'top' | 'end', LogMove> = {
  scrollUp: 'up',
  scrollDown: 'down',
  pageUp: 'pageUp',
  pageDown: 'pageDown',
  top: 'top',
  end: 'end',
};

/** Lines a page key scrolls in a view other than the log. */
const PAGE = 10;

/** A key press with no named key or modifier: printable text (or several keys in one read). */
const isPlainText = (k: KeyPress): boolean =>
  !(
    k.upArrow ||
    k.downArrow ||
    k.leftArrow ||
    k.rightArrow ||
    k.pageUp ||
    k.pageDown ||
    k.return ||
    k.escape ||
    k.backspace ||
    k.delete ||
    k.ctrl ||
    k.meta
  );

/**
 * The key presses in one read. Keys that arrive together (typed fast, held
 * down, or on a busy machine) reach the board as one string, which no
 * binding matches: they would be lost. They are taken one by one, as if
 * typed one at a time (each against the state the one before left).
 */
export function keyPresses(input: string, key: KeyPress): [string, KeyPress][] {
  if (input.length > 1 && isPlainText(key))
    return [...input].map((ch) => [ch, ch === '\r' ? { return: true } : {}]);
  return [[input, key]];
}

const nav = (action: NavAction): Intent => ({ type: 'nav', action });
const say = (text: string | null): Intent => ({ type: 'say', text });
/** The state after a nav action, as the store's dispatch leaves it. */
const after = (s: DashboardState, a: NavAction): DashboardState => ({ ...s, nav: reduceNav(s, a) });
const ask = (confirm: Confirm): Intent[] => [nav({ type: 'confirm', confirm })];

/** The intents of one key press (one of keyPresses'), in order. */
export function keyIntents(s: DashboardState, input: string, key: KeyPress, facts: KeyFacts): Intent[] {
  // A message stays until the next key, then the key hints come back.
  const out: Intent[] = s.message ? [say(null)] : [];
  const mode = modeOf(s);
  const b = bindingFor(mode, keyName(input, key), s.nav.level, s.nav.confirm?.kind);
  if (b) return [...out, ...actionIntents(s, b.action, facts)];
  // Text typed into the filter box or the form: no binding, it is the text.
  if (input && !key.ctrl && !key.meta) {
    if (mode === 'filter') out.push(nav({ type: 'filterInput', text: input }));
    if (mode === 'form') out.push(nav({ type: 'formInput', text: input }));
    if (mode === 'note') out.push(nav({ type: 'noteInput', text: input }));
  }
  return out;
}

type Handler = (s: DashboardState, facts: KeyFacts) => Intent[];

/** Moving and opening on the boards. */
const MOVE: Pick<
  Record<ActionName, Handler>,
  'up' | 'down' | 'left' | 'right' | 'drill' | 'back' | 'quit'
> = {
  up: () => [nav({ type: 'move', dir: 'up' })],
  down: () => [nav({ type: 'move', dir: 'down' })],
  left: () => [nav({ type: 'move', dir: 'left' })],
  right: () => [nav({ type: 'move', dir: 'right' })],
  drill: (s) => {
    const out = [nav({ type: 'drill' })];
    const next = after(s, { type: 'drill' });
    // The commit detail shows the iteration's diff and its tests' runs: loaded as it opens.
    const t = next.nav.level === 'detail' ? diffTarget(next) : null;
    if (t)
      out.push(
        { type: 'loadRecord', jobId: t.job.id },
        { type: 'loadDiff', jobId: t.job.id, change: t.change, iteration: t.iteration },
      );
    return out;
  },
  back: () => [nav({ type: 'back' })],
  quit: () => [{ type: 'quit' }],
};

/** Acting on the selected job. */
const JOB: Pick<Record<ActionName, Handler>, 'abandon' | 'retry' | 'land'> = {
  abandon: (s, facts) => {
    const job = selectedJob(s);
    if (!job) return [say('no job selected')];
    if (job.status !== 'active') return [say(`job ${shortJobId(job.id)} is already ${job.status}`)];
    const stale = s.stale[job.id] ? ' (its runner is gone: it is cleaned up here)' : '';
    return ask({
      kind: 'abandon',
      id: job.id,
      prompt: `Abandon job ${shortJobId(job.id)}${stale}? ${facts.todoAfterAbandon(job)}`.trimEnd(),
    });
  },
  retry: (s, facts) => {
    const job = selectedJob(s);
    if (!job) return [say('no job selected')];
    // A running job is refused at once (retry says why); anything else starts a new job, so it asks first.
    if (job.status === 'active' && !s.stale[job.id]) return [{ type: 'retry', jobId: job.id }];
    const todo = facts.todoOf(job);
    const refused = retryRefusal(todo, job.todo_id);
    if (refused) return [say(refused)];
    const fate = todo ? retryFate(todo) : null;
    return ask({
      kind: 'retry',
      id: job.id,
      prompt: `Retry job ${shortJobId(job.id)} as a new job${s.stale[job.id] ? ' (the stale one is ended first)' : ''}?${fate ? ` ${fate}` : ''}`,
    });
  },
  land: (s) => {
    const job = selectedJob(s);
    // The question needs the landing's plan (git), so the io side asks it.
    return job ? [{ type: 'askLand', jobId: job.id }] : [say('no job selected')];
  },
};

/** The answers of a question (confirm mode). */
const ANSWER: Pick<Record<ActionName, Handler>, 'yes' | 'no' | 'abandonClose'> = {
  yes: (s) => {
    const c = s.nav.confirm;
    const out = [nav({ type: 'closeConfirm' })];
    if (!c) return out;
    const act: Record<Confirm['kind'], Intent> = {
      abandon: { type: 'abandon', jobId: c.id },
      retry: { type: 'retry', jobId: c.id },
      land: { type: 'land', jobId: c.id },
      start: { type: 'startTodo', todoId: c.id },
      closeTodo: { type: 'closeTodo', todoId: c.id },
      stopRunner: { type: 'stopRunner' },
      allowAlways: { type: 'answer', jobId: c.id, askId: c.askId ?? -1, answer: 'allow-always' },
    };
    return [...out, act[c.kind]];
  },
  no: (s) => [nav({ type: 'closeConfirm' }), say(NOTHING_DONE[s.nav.confirm?.kind ?? 'abandon'])],
  abandonClose: (s) => {
    const c = s.nav.confirm;
    const out = [nav({ type: 'closeConfirm' })];
    return c?.kind === 'abandon' ? [...out, { type: 'abandon', jobId: c.id, closeTodo: true }] : out;
  },
};

/** The keys of a waiting job's question (the ask view) and of a rejection's note. */
const NEEDS: Pick<
  Record<ActionName, Handler>,
  'allowOnce' | 'allowAlways' | 'rejectAsk' | 'noteAccept' | 'noteCancel' | 'noteBackspace'
> = {
  allowOnce: (s) => {
    const job = selectedJob(s);
    const a = job ? openAsk(job) : null;
    return job && a ? [{ type: 'answer', jobId: job.id, askId: a.id, answer: 'allow' }] : [say(NOT_WAITING)];
  },
  allowAlways: (s) => {
    const job = selectedJob(s);
    const a = job ? openAsk(job) : null;
    // What "always" covers is said before it is given.
    return job && a
      ? ask({ kind: 'allowAlways', id: job.id, askId: a.id, prompt: `${alwaysCovers(a)} Allow always?` })
      : [say(NOT_WAITING)];
  },
  rejectAsk: (s) => {
    const job = selectedJob(s);
    const a = job ? openAsk(job) : null;
    return job && a
      ? [
          nav({ type: 'noteStart', jobId: job.id, askId: a.id }),
          say('a note for the agent: why, or what to do instead (enter sends, esc goes back)'),
        ]
      : [say(NOT_WAITING)];
  },
  noteAccept: (s) => {
    const n = s.nav.note;
    const out = [nav({ type: 'noteCancel' })];
    if (!n) return out;
    const note = n.text.trim();
    return [
      ...out,
      { type: 'answer', jobId: n.jobId, askId: n.askId, answer: 'reject', ...(note ? { note } : {}) },
    ];
  },
  noteCancel: () => [nav({ type: 'noteCancel' }), say('nothing sent: the job still waits')],
  noteBackspace: () => [nav({ type: 'noteBackspace' })],
};

const NOT_WAITING = 'this job does not wait for you now (esc closes)';

/** The backlog's keys, on the jobs board. */
const BACKLOG: Pick<
  Record<ActionName, Handler>,
  'newTodo' | 'start' | 'closeTodo' | 'editTodo' | 'runner' | 'slotsUp' | 'slotsDown'
> = {
  newTodo: (s, facts) =>
    s.repo && facts.inRepo
      ? [nav({ type: 'formStart' }), say(`new todo · ${FIELD_PROMPTS.title}`)]
      : [say(NO_BACKLOG)],
  start: (s) => {
    const todo = selectedTodo(s);
    if (!todo) return [say('s starts a todo: select one in the Backlog column')];
    const blocked = s.backlog.blocked.find((b) => b.todo.id === todo.id);
    if (!blocked) return [{ type: 'startTodo', todoId: todo.id }];
    return ask({
      kind: 'start',
      id: todo.id,
      prompt: `Todo ${todo.id} is blocked (${blocked.blockers.map(blockerWords).join('; ')}): start a job for it anyway?`,
    });
  },
  closeTodo: (s) => {
    const todo = selectedTodo(s);
    if (!todo) return [say('x closes a todo: select one in the Backlog column')];
    return ask({
      kind: 'closeTodo',
      id: todo.id,
      prompt: `Close todo ${todo.id} “${shownLine(todo.title)}”? It will not run (ii todo reopen ${todo.id} brings it back).`,
    });
  },
  editTodo: (s) => {
    const todo = selectedTodo(s);
    if (!todo) return [say('e edits a todo: select one in the Backlog column')];
    return [{ type: 'editTodo', todoId: todo.id }];
  },
  runner: () => [{ type: 'toggleRunner' }],
  slotsUp: () => [{ type: 'changeSlots', delta: 1 }],
  slotsDown: () => [{ type: 'changeSlots', delta: -1 }],
};

/** The new-todo form (form mode). */
const FORM: Pick<Record<ActionName, Handler>, 'formNext' | 'formBackspace' | 'formCancel'> = {
  formNext: (s) => {
    const f = s.nav.form;
    if (!f) return [];
    const why = formError(f.field, f.text);
    if (why) return [say(why)];
    const out = [nav({ type: 'formNext' })];
    if (f.field === 'description') return [...out, { type: 'createTodo' }];
    const next = after(s, { type: 'formNext' }).nav.form;
    return [...out, say(next ? `new todo · ${FIELD_PROMPTS[next.field]}` : null)];
  },
  formBackspace: () => [nav({ type: 'formBackspace' })],
  formCancel: () => [nav({ type: 'formCancel' }), say('nothing created')],
};

/** The filter box (filter mode) and what the boards show. */
const FILTER: Pick<
  Record<ActionName, Handler>,
  'filter' | 'filterAccept' | 'filterCancel' | 'filterBackspace' | 'finished'
> = {
  filter: () => [nav({ type: 'filterStart' })],
  filterAccept: () => [nav({ type: 'filterAccept' })],
  filterCancel: () => [nav({ type: 'filterCancel' })],
  filterBackspace: () => [nav({ type: 'filterBackspace' })],
  finished: () => [nav({ type: 'toggleFinished' })],
};

/** Scrolling a view: the log pages by its rows as drawn (a pager's keys); the other views by lines. */
const scroll =
  (a: keyof typeof LOG_MOVES): Handler =>
  (s) => {
    if (s.nav.overlay === 'logs') return [nav({ type: 'logScroll', to: LOG_MOVES[a] })];
    if (a === 'end') return [say('G goes to the end of the log (l)')];
    const delta = { scrollUp: -1, scrollDown: 1, pageUp: -PAGE, pageDown: PAGE, top: -s.nav.scroll }[a];
    return [nav({ type: 'scroll', delta })];
  };

/** Changing a change's iterations board: [ and ]. */
const changeStep =
  (delta: -1 | 1): Handler =>
  (s) => {
    if (s.nav.level !== 'commits')
      return [say("[ and ] step between changes on a change's iterations board")];
    const step: NavAction = { type: 'changeStep', delta };
    const out = [nav(step)];
    if (after(s, step).nav.change === s.nav.change)
      out.push(say(delta < 0 ? 'this is the first change' : 'this is the last change'));
    return out;
  };

/** The views over a board (detail and overlays) and what opens them. */
const VIEW: Pick<
  Record<ActionName, Handler>,
  | 'logs'
  | 'output'
  | 'files'
  | 'diff'
  | 'mark'
  | 'prevChange'
  | 'nextChange'
  | 'help'
  | 'close'
  | 'scrollUp'
  | 'scrollDown'
  | 'pageUp'
  | 'pageDown'
  | 'top'
  | 'end'
> = {
  logs: (s) => {
    const job = selectedJob(s);
    if (!job) return [say('no job selected')];
    return [{ type: 'loadRecord', jobId: job.id }, nav({ type: 'overlay', overlay: 'logs' })];
  },
  output: () => [nav({ type: 'toggleOutput' })],
  files: (s) => (selectedJob(s) ? [nav({ type: 'overlay', overlay: 'files' })] : [say('no job selected')]),
  diff: (s) => {
    const t = diffRequest(s);
    if (!t) return [say('no iteration to diff yet')];
    const m = s.nav.mark;
    if (m && m.jobId === t.job.id && !t.from)
      return [
        say(
          `${iterationLabel(m)} is the marked iteration: move to another one, then d diffs it against ${iterationLabel(m)}`,
        ),
      ];
    return [
      { type: 'loadDiff', jobId: t.job.id, change: t.change, iteration: t.iteration, from: t.from },
      nav({ type: 'overlay', overlay: 'diff' }),
    ];
  },
  mark: (s) => {
    if (s.nav.level !== 'commits' && s.nav.level !== 'detail')
      return [say('m marks an iteration: enter a job, then a change, to reach its iterations')];
    const t = diffTarget(s);
    if (!t) return [say('no iteration to mark yet')];
    const m = s.nav.mark;
    if (m && m.jobId === t.job.id && m.change === t.change && m.iteration === t.iteration)
      return [nav({ type: 'mark', mark: null }), say(`mark on ${iterationLabel(m)} cleared`)];
    return [nav({ type: 'mark', mark: { jobId: t.job.id, change: t.change, iteration: t.iteration } })];
  },
  prevChange: changeStep(-1),
  nextChange: changeStep(1),
  help: () => [nav({ type: 'overlay', overlay: 'help' })],
  close: () => [nav({ type: 'closeOverlay' })],
  scrollUp: scroll('scrollUp'),
  scrollDown: scroll('scrollDown'),
  pageUp: scroll('pageUp'),
  pageDown: scroll('pageDown'),
  top: scroll('top'),
  end: scroll('end'),
};

/** Every action's handler: a new action in the keymap fails to compile here until it has one. */
const HANDLERS: Record<ActionName, Handler> = {
  ...MOVE,
  ...JOB,
  ...ANSWER,
  ...NEEDS,
  ...BACKLOG,
  ...FORM,
  ...FILTER,
  ...VIEW,
};

/** The intents of a bound action, in the state the key found. */
export const actionIntents = (s: DashboardState, a: ActionName, facts: KeyFacts): Intent[] =>
  HANDLERS[a](s, facts);
