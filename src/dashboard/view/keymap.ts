// The keymap as data: one table drives the input handler and the `?` help
// overlay (and the README's key table), so they never drift apart.
import type { Confirm, DashboardState, Level } from './state.js';

/** Who has the keys: a modal above the board takes them while it is open. */
export type Mode = 'board' | 'detail' | 'overlay' | 'confirm' | 'filter' | 'form' | 'ask' | 'note';

export type ActionName =
  | 'up'
  | 'down'
  | 'left'
  | 'right'
  | 'drill'
  | 'back'
  | 'abandon'
  | 'abandonClose'
  | 'retry'
  | 'logs'
  | 'diff'
  | 'mark'
  | 'land'
  | 'prevChange'
  | 'nextChange'
  | 'files'
  | 'output'
  | 'filter'
  | 'finished'
  | 'help'
  | 'quit'
  | 'yes'
  | 'no'
  | 'close'
  | 'scrollUp'
  | 'scrollDown'
  | 'pageUp'
  | 'pageDown'
  | 'top'
  | 'end'
  | 'filterAccept'
  | 'filterCancel'
  | 'filterBackspace'
  | 'newTodo'
  | 'editTodo'
  | 'start'
  | 'closeTodo'
  | 'runner'
  | 'slotsUp'
  | 'slotsDown'
  | 'formNext'
  | 'formCancel'
  | 'formBackspace'
  | 'allowOnce'
  | 'allowAlways'
  | 'rejectAsk'
  | 'noteAccept'
  | 'noteCancel'
  | 'noteBackspace';

/** What keys do, the `?` help's sections: a person looks for a key by what they want to do. */
export type Group = 'move' | 'open' | 'job' | 'needs' | 'backlog' | 'view' | 'answer';

export const GROUPS: Record<Group, string> = {
  move: 'Move',
  open: 'Open and close',
  job: 'Act on a job',
  needs: 'Answer a job that needs you',
  backlog: 'Run the backlog',
  view: 'View',
  answer: 'In a question, the filter box or the new-todo form',
};

export interface Binding {
  /** Key names: a character, or up/down/left/right/enter/esc/backspace/pageup/pagedown/ctrl+c. */
  keys: string[];
  description: string;
  action: ActionName;
  group: Group;
  /** A one-word label for the status bar's key hints; bindings without one are only in the help. */
  hint?: string;
  /** The modes the binding is live in. */
  when: Mode[];
  /** The levels its hint is shown at, when not all: a key that only means something on some boards. */
  hintAt?: Level[];
  /** The levels the binding is live at, when not all: one key may mean one thing per level. */
  levels?: Level[];
  /** Its hint stays when the hints are cut to fit the width (the way out, and where the rest are). */
  keep?: boolean;
  /** The questions it answers, when not all: an answer only some questions offer (shown in them). */
  confirms?: Confirm['kind'][];
  /** What the answer does, as the question shows it beside its key (with `confirms`). */
  answer?: string;
}

const BOARD: Mode[] = ['board'];
/** The ask view: a waiting job's request in full. */
const ASK: Mode[] = ['ask'];
/** The views that scroll. */
const SCROLLS: Mode[] = ['detail', 'overlay', 'ask'];
const VIEWS: Mode[] = ['board', 'detail'];
/** The keys of the backlog act on the jobs board, where its column is. */
const JOBS: Level[] = ['jobs'];

export const KEYMAP: readonly Binding[] = [
  { keys: ['up', 'k'], description: 'move up', action: 'up', group: 'move', when: BOARD },
  { keys: ['down', 'j'], description: 'move down', action: 'down', group: 'move', when: BOARD },
  { keys: ['left', 'h'], description: 'previous column', action: 'left', group: 'move', when: BOARD },
  { keys: ['right', 'L'], description: 'next column', action: 'right', group: 'move', when: BOARD },
  {
    keys: ['enter'],
    description: 'drill in: job → changes → iterations → detail; a Needs you card: its question',
    action: 'drill',
    group: 'open',
    hint: 'drill',
    when: BOARD,
  },
  {
    keys: ['esc'],
    description: 'back one level (or first clear the mark, or the filter)',
    action: 'back',
    group: 'open',
    hint: 'back',
    when: VIEWS,
  },
  {
    keys: ['a'],
    description: 'abandon the selected job (asks y/n)',
    action: 'abandon',
    group: 'job',
    hint: 'abandon',
    when: VIEWS,
  },
  {
    keys: ['r'],
    description: 'retry the selected job (asks y/n; a new job, in the background)',
    action: 'retry',
    group: 'job',
    hint: 'retry',
    when: VIEWS,
  },
  {
    keys: ['l'],
    description: "the job's whole log: every agent session, tests with output, stages, reviews",
    action: 'logs',
    group: 'open',
    hint: 'log',
    when: [...VIEWS, 'overlay'],
  },
  {
    keys: ['d'],
    description: 'iteration diff of the selected iteration (against the marked one, if any)',
    action: 'diff',
    group: 'open',
    hint: 'diff',
    when: [...VIEWS, 'overlay'],
  },
  {
    keys: ['m'],
    description: 'land the selected completed job: rebased, tested, in the background (asks y/n)',
    action: 'land',
    group: 'job',
    hint: 'land',
    levels: ['jobs'],
    when: BOARD,
  },
  {
    keys: ['m'],
    description: 'mark the selected iteration (m again unmarks): d then diffs another against it',
    action: 'mark',
    group: 'view',
    hint: 'mark',
    hintAt: ['commits', 'detail'],
    levels: ['changes', 'commits', 'detail'],
    when: VIEWS,
  },
  {
    keys: ['['],
    description: "the previous change's iterations (a mark stays)",
    action: 'prevChange',
    group: 'move',
    when: BOARD,
  },
  {
    keys: [']'],
    description: "the next change's iterations (a mark stays)",
    action: 'nextChange',
    group: 'move',
    when: BOARD,
  },
  {
    keys: ['f'],
    description: "the job's modified files (live, or from the record once it ended)",
    action: 'files',
    group: 'open',
    hint: 'files',
    when: [...VIEWS, 'overlay'],
  },
  {
    keys: ['o'],
    description: 'failing tests: all of their output, or only its end',
    action: 'output',
    group: 'view',
    hint: 'output',
    when: ['detail'],
  },
  {
    keys: ['/'],
    description: 'filter jobs by text',
    action: 'filter',
    group: 'view',
    hint: 'filter',
    when: BOARD,
  },
  { keys: ['F'], description: 'show or hide finished jobs', action: 'finished', group: 'view', when: BOARD },
  {
    keys: ['n'],
    description: 'new todo: title, then type, priority and description (enter skips one)',
    action: 'newTodo',
    group: 'backlog',
    hint: 'new',
    levels: JOBS,
    when: BOARD,
  },
  {
    keys: ['s'],
    description: 'start a job for the selected todo now, in the background',
    action: 'start',
    group: 'backlog',
    hint: 'start',
    levels: JOBS,
    when: BOARD,
  },
  {
    keys: ['e'],
    description: 'edit the selected todo in $EDITOR',
    action: 'editTodo',
    group: 'backlog',
    levels: JOBS,
    when: BOARD,
  },
  {
    keys: ['x'],
    description: 'close the selected todo (asks y/n; ii todo reopen brings it back)',
    action: 'closeTodo',
    group: 'backlog',
    levels: JOBS,
    when: BOARD,
  },
  {
    keys: ['R'],
    description:
      "start or stop this machine's backlog runner for the repository (ii run --watch, in the background)",
    action: 'runner',
    group: 'backlog',
    hint: 'run',
    levels: JOBS,
    when: BOARD,
  },
  {
    keys: ['+'],
    description: "one more of the runner's slots (jobs at once)",
    action: 'slotsUp',
    group: 'backlog',
    levels: JOBS,
    when: BOARD,
  },
  {
    keys: ['-'],
    description: 'one slot fewer (running jobs go on; no new one starts until below it)',
    action: 'slotsDown',
    group: 'backlog',
    levels: JOBS,
    when: BOARD,
  },
  {
    keys: ['?'],
    description: 'this help',
    action: 'help',
    group: 'open',
    hint: 'help',
    keep: true,
    when: [...VIEWS, 'overlay'],
  },
  {
    keys: ['up', 'k'],
    description: 'scroll up (in a view)',
    action: 'scrollUp',
    group: 'move',
    when: SCROLLS,
  },
  {
    keys: ['down', 'j'],
    description: 'scroll down (in a view)',
    action: 'scrollDown',
    group: 'move',
    when: SCROLLS,
  },
  {
    keys: ['pageup', 'b'],
    description: 'page up (in a view)',
    action: 'pageUp',
    group: 'move',
    when: SCROLLS,
  },
  {
    keys: ['pagedown', 'space'],
    description: 'page down (in a view)',
    action: 'pageDown',
    group: 'move',
    when: SCROLLS,
  },
  {
    keys: ['g'],
    description: 'to the top (in a view)',
    action: 'top',
    group: 'move',
    when: SCROLLS,
  },
  {
    keys: ['G'],
    description: "to the end of the log, following the job's new lines",
    action: 'end',
    group: 'move',
    when: ['overlay'],
  },
  {
    keys: ['esc', 'q'],
    description: 'close the view (log, diff, files, this help, a question)',
    action: 'close',
    group: 'open',
    when: ['overlay'],
  },
  {
    // The same key as a hint in the question's view (its row in the help is the one above).
    keys: ['esc', 'q'],
    description: 'close the view (log, diff, files, this help, a question)',
    action: 'close',
    group: 'open',
    hint: 'close',
    keep: true,
    when: ASK,
  },
  {
    keys: ['y'],
    description: 'allow it once; then the next job that waits (like an inbox)',
    action: 'allowOnce',
    group: 'needs',
    hint: 'allow',
    when: ASK,
  },
  {
    keys: ['A'],
    description: 'allow it always, for this job (says what that covers and asks y/n first)',
    action: 'allowAlways',
    group: 'needs',
    hint: 'always',
    when: ASK,
  },
  {
    keys: ['n'],
    description: 'reject it, with a note typed for the agent; then the next job that waits',
    action: 'rejectAsk',
    group: 'needs',
    hint: 'reject',
    when: ASK,
  },
  {
    keys: ['enter'],
    description: 'send the rejection and its note (an empty note: none)',
    action: 'noteAccept',
    group: 'needs',
    when: ['note'],
  },
  {
    keys: ['esc'],
    description: 'back to the question (nothing sent)',
    action: 'noteCancel',
    group: 'needs',
    when: ['note'],
  },
  {
    keys: ['backspace'],
    description: 'delete a character',
    action: 'noteBackspace',
    group: 'needs',
    when: ['note'],
  },
  { keys: ['y'], description: 'yes', action: 'yes', group: 'answer', when: ['confirm'] },
  { keys: ['n', 'esc'], description: 'no', action: 'no', group: 'answer', when: ['confirm'] },
  {
    keys: ['x'],
    description: 'in the abandon question: abandon it and close its todo, so no runner starts it',
    action: 'abandonClose',
    group: 'answer',
    when: ['confirm'],
    confirms: ['abandon'],
    answer: 'abandon and close the todo',
  },
  {
    keys: ['enter'],
    description: 'apply the filter',
    action: 'filterAccept',
    group: 'answer',
    when: ['filter'],
  },
  {
    keys: ['esc'],
    description: 'clear the filter',
    action: 'filterCancel',
    group: 'answer',
    when: ['filter'],
  },
  {
    keys: ['backspace'],
    description: 'delete a character',
    action: 'filterBackspace',
    group: 'answer',
    when: ['filter'],
  },
  {
    keys: ['enter'],
    description: 'next field (after the last one, the todo is created)',
    action: 'formNext',
    group: 'answer',
    when: ['form'],
  },
  {
    keys: ['esc'],
    description: 'cancel the new todo (nothing is written)',
    action: 'formCancel',
    group: 'answer',
    when: ['form'],
  },
  {
    keys: ['backspace'],
    description: 'delete a character',
    action: 'formBackspace',
    group: 'answer',
    when: ['form'],
  },
  {
    keys: ['q', 'ctrl+c'],
    description: 'quit',
    action: 'quit',
    group: 'open',
    hint: 'quit',
    keep: true,
    when: VIEWS,
  },
  {
    keys: ['ctrl+c'],
    description: 'quit',
    action: 'quit',
    group: 'open',
    when: ['overlay', 'confirm', 'filter', 'form', 'ask', 'note'],
  },
];

/** The subset of Ink's Key the handler looks at. */
export interface KeyPress {
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  return?: boolean;
  escape?: boolean;
  backspace?: boolean;
  delete?: boolean;
  ctrl?: boolean;
  meta?: boolean;
}

/** The key name of a key press, as the table spells it. */
export function keyName(input: string, key: KeyPress): string {
  if (key.upArrow) return 'up';
  if (key.downArrow) return 'down';
  if (key.leftArrow) return 'left';
  if (key.rightArrow) return 'right';
  if (key.pageUp) return 'pageup';
  if (key.pageDown) return 'pagedown';
  if (key.return) return 'enter';
  if (key.escape) return 'esc';
  if (key.backspace || key.delete) return 'backspace';
  if (key.ctrl) return `ctrl+${input}`;
  if (input === ' ') return 'space';
  return input;
}

export function modeOf(s: DashboardState): Mode {
  if (s.nav.confirm) return 'confirm';
  if (s.nav.note) return 'note';
  if (s.nav.form) return 'form';
  if (s.nav.filtering) return 'filter';
  if (s.nav.overlay === 'ask') return 'ask';
  if (s.nav.overlay) return 'overlay';
  return s.nav.level === 'detail' ? 'detail' : 'board';
}

/** Whether a binding is live at a level (a binding without levels is live at every one). */
const liveAt = (b: Binding, level?: Level) => !b.levels || !level || b.levels.includes(level);

/** Whether a binding answers a question (one without confirms answers every one). */
const answers = (b: Binding, kind?: Confirm['kind']) => !b.confirms || !kind || b.confirms.includes(kind);

/** The binding a key press triggers in a mode (at a level; in a question, of that kind), if any. */
export function bindingFor(
  mode: Mode,
  name: string,
  level?: Level,
  confirm?: Confirm['kind'],
): Binding | undefined {
  return KEYMAP.find(
    (b) => b.when.includes(mode) && b.keys.includes(name) && liveAt(b, level) && answers(b, confirm),
  );
}

/** The answers a question offers beyond y/n, from the table: each key and what it does. */
export function extraAnswers(kind: Confirm['kind']): { key: string; answer: string }[] {
  return KEYMAP.filter((b) => b.when.includes('confirm') && b.confirms?.includes(kind)).map((b) => ({
    key: b.keys[0]!,
    answer: b.answer ?? b.description,
  }));
}

const shown = (k: string) =>
  ({ up: '↑', down: '↓', left: '←', right: '→', enter: 'enter', esc: 'esc', space: 'space' })[k] ?? k;

/** One key hint of the status bar ("q quit"); kept ones survive cutting to the width. */
export interface Hint {
  text: string;
  keep: boolean;
}

/** The status bar's key hints for a mode (at a level), from the table, in its order. */
export function keyHints(mode: Mode, level?: Level): Hint[] {
  return KEYMAP.filter(
    (b) =>
      b.hint &&
      b.when.includes(mode) &&
      liveAt(b, level) &&
      (!b.hintAt || !level || b.hintAt.includes(level)),
  ).map((b) => ({ text: `${shown(b.keys[0]!)} ${b.hint}`, keep: b.keep === true }));
}

const SEP = ' · ';

/**
 * The hints line, fitted to `width` after a lead (a filter, a mark): hints
 * are given up from the end, except the kept ones (`? help` lists the rest,
 * `q quit` is the way out), so a narrow screen never loses those two to an
 * ellipsis.
 */
export function fitHints(lead: string, hints: Hint[], width: number): string {
  const kept = hints
    .filter((h) => h.keep)
    .map((h) => h.text)
    .join(SEP);
  // A lead too long to leave room for the kept hints is cut, not them.
  const room = width - (kept ? kept.length + SEP.length : 0);
  const head = lead.length > room && room > 1 ? `${lead.slice(0, room - 1).trimEnd()}…` : lead;
  const line = (hs: Hint[]) => [head, ...hs.map((h) => h.text)].filter(Boolean).join(SEP);
  const shown = [...hints];
  while (line(shown).length > width) {
    const i = shown.findLastIndex((h) => !h.keep);
    if (i < 0) break;
    shown.splice(i, 1);
  }
  return line(shown);
}

const ALL_MODES: Mode[] = ['board', 'detail', 'overlay', 'confirm', 'filter', 'form', 'ask', 'note'];

/** One section of the help: a group's rows (keys, what they do). */
export interface HelpSection {
  title: string;
  rows: [string, string][];
}

/**
 * The help, from the table: one section per group, one row per meaning.
 * Keys that do two things by mode (↑ moves on a board, scrolls in a view)
 * are one row, not two. The `?` overlay shows every mode's, so the keys of
 * the confirmation and the filter box are documented too.
 */
export function helpSections(modes: Mode[] = ALL_MODES): HelpSection[] {
  const sections: HelpSection[] = [];
  const seen = new Set<string>();
  for (const g of Object.keys(GROUPS) as Group[]) {
    const rows: [string, string][] = [];
    for (const b of KEYMAP) {
      if (b.group !== g || !b.when.some((m) => modes.includes(m))) continue;
      const id = `${b.action}|${b.description}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const keys = b.keys.map(shown).join(' ');
      const same = rows.find(([k]) => k === keys);
      if (same) same[1] = `${same[1]} · ${b.description}`;
      else rows.push([keys, b.description]);
    }
    if (rows.length) sections.push({ title: GROUPS[g], rows });
  }
  return sections;
}

/** Every help row, sections flattened. */
export const helpRows = (modes: Mode[] = ALL_MODES): [string, string][] =>
  helpSections(modes).flatMap((s) => s.rows);

const cell = (k: string) =>
  k
    .split(' ')
    .map((x) => `\`${x === '|' ? '\\|' : x}\``)
    .join(' ');

/** The keys table as markdown, for the README (test/unit/keymap.test.ts checks the README matches). */
export function keymapMarkdown(): string {
  return [
    '| Keys | What they do |',
    '| --- | --- |',
    ...helpSections(ALL_MODES).flatMap((s) => [
      `| **${s.title}** | |`,
      ...s.rows.map(([k, d]) => `| ${cell(k)} | ${d} |`),
    ]),
  ].join('\n');
}
