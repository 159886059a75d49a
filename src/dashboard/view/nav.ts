// Screen state as a pure reducer: the key handlers only dispatch these
// actions, so selection, drilling and scrolling are tested without a screen.
import { boardColumns, boardLevel, cursor, drilledJob, selectedCard, TODO_KEY } from './board.js';
import { moveLog, type LogMove } from './log-view.js';
import { NEEDS_YOU } from './needs-you.js';
import {
  FORM_FIELDS,
  type Confirm,
  type DashboardState,
  type Mark,
  type Nav,
  type Overlay,
} from './state.js';

export type NavAction =
  | { type: 'move'; dir: 'up' | 'down' | 'left' | 'right' }
  | { type: 'drill' }
  | { type: 'back' }
  | { type: 'overlay'; overlay: Exclude<Overlay, null> }
  | { type: 'closeOverlay' }
  | { type: 'confirm'; confirm: Confirm }
  | { type: 'closeConfirm' }
  | { type: 'filterStart' }
  | { type: 'filterInput'; text: string }
  | { type: 'filterBackspace' }
  | { type: 'filterAccept' }
  | { type: 'filterCancel' }
  | { type: 'toggleFinished' }
  | { type: 'scroll'; delta: number }
  /** A pager key in the log (`l`): by its rows at the width it is drawn. */
  | { type: 'logScroll'; to: LogMove }
  | { type: 'toggleOutput' }
  | { type: 'mark'; mark: Mark | null }
  | { type: 'changeStep'; delta: number }
  | { type: 'formStart' }
  | { type: 'formInput'; text: string }
  | { type: 'formBackspace' }
  /** The current field's text is its value; the next field (or the end: form null). */
  | { type: 'formNext' }
  | { type: 'formCancel' }
  /** The jobs board's cursor onto a job's card (the inbox's next waiting job). */
  | { type: 'selectJob'; jobId: string }
  | { type: 'noteStart'; jobId: string; askId: number }
  | { type: 'noteInput'; text: string }
  | { type: 'noteBackspace' }
  | { type: 'noteCancel' };

function moveCursor(s: DashboardState, dir: 'up' | 'down' | 'left' | 'right'): Nav {
  const cols = boardColumns(s);
  const level = boardLevel(s);
  let { col, row } = cursor(s);
  if (dir === 'up') row = Math.max(0, row - 1);
  else if (dir === 'down') row = Math.min(Math.max(0, (cols[col]?.cards.length ?? 0) - 1), row + 1);
  else {
    // Skip empty columns, so a step always lands on a card when there is one that way.
    const step = dir === 'left' ? -1 : 1;
    let c = col + step;
    while (c >= 0 && c < cols.length && cols[c]!.cards.length === 0) c += step;
    if (c < 0 || c >= cols.length) c = Math.max(0, Math.min(cols.length - 1, col + step));
    col = c;
    row = Math.min(row, Math.max(0, (cols[col]?.cards.length ?? 0) - 1));
  }
  const key = cols[col]?.cards[row]?.key ?? null;
  return { ...s.nav, sel: { ...s.nav.sel, [level]: { col, row, key } } };
}

/** The next screen state. Unknown or impossible moves return the state unchanged. */
export function reduceNav(s: DashboardState, a: NavAction): Nav {
  const nav = s.nav;
  switch (a.type) {
    case 'move':
      return moveCursor(s, a.dir);
    case 'drill': {
      const card = selectedCard(s);
      if (nav.level === 'jobs') {
        // A todo has no changes to drill into (yet): s starts a job for it.
        if (!card || card.key.startsWith(TODO_KEY)) return nav;
        // A waiting job's card opens its question, to be answered there.
        if (boardColumns(s)[cursor(s).col]?.title === NEEDS_YOU) return { ...nav, overlay: 'ask', scroll: 0 };
        return {
          ...nav,
          level: 'changes',
          jobId: card.key,
          change: null,
          iteration: null,
          sel: { ...nav.sel, changes: { col: 0, row: 0, key: null } },
          scroll: 0,
        };
      }
      if (nav.level === 'changes') {
        if (!card) return nav;
        return {
          ...nav,
          level: 'commits',
          change: Number(card.key),
          iteration: null,
          sel: { ...nav.sel, commits: { col: 0, row: 0, key: null } },
          scroll: 0,
        };
      }
      if (nav.level === 'commits') {
        if (!card) return nav;
        return { ...nav, level: 'detail', iteration: Number(card.key), scroll: 0 };
      }
      return nav;
    }
    case 'back':
      // A mark is cleared before anything else, so esc never leaves one behind unseen.
      if (nav.mark) return { ...nav, mark: null };
      if (nav.level === 'detail')
        return { ...nav, level: 'commits', iteration: null, scroll: 0, fullOutput: false };
      if (nav.level === 'commits') return { ...nav, level: 'changes', change: null, scroll: 0 };
      if (nav.level === 'changes') return { ...nav, level: 'jobs', jobId: null, scroll: 0 };
      if (nav.filter) return { ...nav, filter: '' };
      return nav;
    case 'overlay':
      // The log opens at its end, following it.
      return nav.overlay === a.overlay
        ? { ...nav, overlay: null, scroll: 0 }
        : { ...nav, overlay: a.overlay, scroll: 0, follow: true };
    case 'closeOverlay':
      return { ...nav, overlay: null, scroll: 0 };
    case 'confirm':
      return { ...nav, confirm: a.confirm };
    case 'closeConfirm':
      return { ...nav, confirm: null };
    case 'filterStart':
      return { ...nav, filtering: true };
    case 'filterInput':
      return { ...nav, filter: nav.filter + a.text };
    case 'filterBackspace':
      return { ...nav, filter: nav.filter.slice(0, -1) };
    case 'filterAccept':
      return { ...nav, filtering: false };
    case 'filterCancel':
      return { ...nav, filtering: false, filter: '' };
    case 'toggleFinished':
      return { ...nav, showFinished: !nav.showFinished };
    case 'scroll':
      return { ...nav, scroll: Math.max(0, nav.scroll + a.delta) };
    case 'logScroll':
      return { ...nav, ...moveLog(s, a.to) };
    case 'toggleOutput':
      return { ...nav, fullOutput: !nav.fullOutput };
    case 'mark':
      return { ...nav, mark: a.mark };
    case 'formStart':
      return { ...nav, form: { field: 'title', values: {}, text: '' } };
    case 'formInput':
      // One line per field: a pasted newline would end it, not go into it.
      return nav.form
        ? { ...nav, form: { ...nav.form, text: nav.form.text + a.text.replace(/[\r\n]+/g, ' ') } }
        : nav;
    case 'formBackspace':
      return nav.form ? { ...nav, form: { ...nav.form, text: nav.form.text.slice(0, -1) } } : nav;
    case 'formNext': {
      const f = nav.form;
      if (!f) return nav;
      const values = { ...f.values, [f.field]: f.text };
      const next = FORM_FIELDS[FORM_FIELDS.indexOf(f.field) + 1];
      return { ...nav, form: next ? { field: next, values, text: '' } : { ...f, values, text: '' } };
    }
    case 'formCancel':
      return { ...nav, form: null };
    case 'selectJob': {
      const cols = boardColumns(s);
      for (let col = 0; col < cols.length; col++) {
        const row = cols[col]!.cards.findIndex((c) => c.key === a.jobId);
        if (row >= 0) return { ...nav, sel: { ...nav.sel, jobs: { col, row, key: a.jobId } }, scroll: 0 };
      }
      return nav;
    }
    case 'noteStart':
      return { ...nav, note: { jobId: a.jobId, askId: a.askId, text: '' } };
    case 'noteInput':
      // One line: a pasted newline would send it half typed.
      return nav.note
        ? { ...nav, note: { ...nav.note, text: nav.note.text + a.text.replace(/[\r\n]+/g, ' ') } }
        : nav;
    case 'noteBackspace':
      return nav.note ? { ...nav, note: { ...nav.note, text: nav.note.text.slice(0, -1) } } : nav;
    case 'noteCancel':
      return { ...nav, note: null };
    case 'changeStep': {
      // The iterations of the change before or after, keeping the mark: how a
      // mark in one change reaches an iteration of another.
      const job = drilledJob(s);
      if (nav.level !== 'commits' || nav.change == null || !job) return nav;
      const change = nav.change + a.delta;
      if (change < 0 || change >= job.changes.length) return nav;
      return { ...nav, change, sel: { ...nav.sel, commits: { col: 0, row: 0, key: null } }, scroll: 0 };
    }
  }
}

/** A drilled-into job that disappeared (deleted state) sends the view back to the jobs board. */
export function sanitizeNav(s: DashboardState): Nav {
  if (s.nav.level !== 'jobs' && !drilledJob(s)) return { ...s.nav, level: 'jobs', jobId: null };
  return s.nav;
}

/**
 * Pins the cursor to the card it is on before the board changes. A cursor
 * that was never moved is a position, not a card: a new job appearing above
 * the selected one would slide the selection onto the newcomer, and `a` or
 * `r` would then act on a job the user was not looking at.
 */
export function keepSelection(prev: DashboardState, next: DashboardState): Nav {
  const level = boardLevel(prev);
  if (boardLevel(next) !== level || next.nav.sel[level].key != null) return next.nav;
  const card = selectedCard(prev);
  if (!card) return next.nav;
  const { col, row } = cursor(prev);
  return { ...next.nav, sel: { ...next.nav.sel, [level]: { col, row, key: card.key } } };
}
