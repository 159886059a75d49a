// The keymap as data: one table drives the input handler and the `?` help
// overlay (and the README's key table), so they never drift apart.
import type { DashboardState, Level } from './state.js';

/** Who has the keys: a modal above the board takes them while it is open. */
export type Mode = 'board' | 'detail' | 'overlay' | 'confirm' | 'filter';

export type ActionName =
  | 'up'
  | 'down'
  | 'left'
  | 'right'
  | 'drill'
  | 'back'
  | 'abandon'
  | 'retry'
  | 'logs'
  | 'diff'
  | 'mark'
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
  | 'filterAccept'
  | 'filterCancel'
  | 'filterBackspace';

export interface Binding {
  /** Key names: a character, or up/down/left/right/enter/esc/backspace/pageup/pagedown/ctrl+c. */
  keys: string[];
  description: string;
  action: ActionName;
  /** A one-word label for the status bar's key hints; bindings without one are only in the help. */
  hint?: string;
  /** The modes the binding is live in. */
  when: Mode[];
  /** The levels its hint is shown at, when not all: a key that only means something on some boards. */
  hintAt?: Level[];
}

const BOARD: Mode[] = ['board'];
const VIEWS: Mode[] = ['board', 'detail'];

export const KEYMAP: readonly Binding[] = [
  { keys: ['up', 'k'], description: 'move up', action: 'up', when: BOARD },
  { keys: ['down', 'j'], description: 'move down', action: 'down', when: BOARD },
  { keys: ['left', 'h'], description: 'previous column', action: 'left', when: BOARD },
  { keys: ['right', 'L'], description: 'next column', action: 'right', when: BOARD },
  {
    keys: ['enter'],
    description: 'drill in: job → changes → iterations → detail',
    action: 'drill',
    hint: 'drill',
    when: BOARD,
  },
  {
    keys: ['esc'],
    description: 'back one level (or first clear the mark, or the filter)',
    action: 'back',
    hint: 'back',
    when: VIEWS,
  },
  {
    keys: ['a'],
    description: 'abandon the selected job (asks y/n)',
    action: 'abandon',
    hint: 'abandon',
    when: VIEWS,
  },
  {
    keys: ['r'],
    description: 'retry the selected job (asks y/n; a new job, in the background)',
    action: 'retry',
    hint: 'retry',
    when: VIEWS,
  },
  {
    keys: ['l'],
    description: "the job's whole log: every agent session, tests with output, stages, reviews",
    action: 'logs',
    hint: 'log',
    when: [...VIEWS, 'overlay'],
  },
  {
    keys: ['d'],
    description: 'iteration diff of the selected iteration (against the marked one, if any)',
    action: 'diff',
    hint: 'diff',
    when: [...VIEWS, 'overlay'],
  },
  {
    keys: ['m'],
    description: 'mark the selected iteration (m again unmarks): d then diffs another against it',
    action: 'mark',
    hint: 'mark',
    hintAt: ['commits', 'detail'],
    when: VIEWS,
  },
  {
    keys: ['['],
    description: "the previous change's iterations (a mark stays)",
    action: 'prevChange',
    when: BOARD,
  },
  {
    keys: [']'],
    description: "the next change's iterations (a mark stays)",
    action: 'nextChange',
    when: BOARD,
  },
  {
    keys: ['f'],
    description: "the job's modified files (live, or from the record once it ended)",
    action: 'files',
    hint: 'files',
    when: [...VIEWS, 'overlay'],
  },
  {
    keys: ['o'],
    description: 'failing tests: all of their output, or only its end',
    action: 'output',
    hint: 'output',
    when: ['detail'],
  },
  { keys: ['/'], description: 'filter jobs by text', action: 'filter', hint: 'filter', when: BOARD },
  { keys: ['s'], description: 'show or hide finished jobs', action: 'finished', when: BOARD },
  { keys: ['?'], description: 'this help', action: 'help', hint: 'help', when: [...VIEWS, 'overlay'] },
  { keys: ['up', 'k'], description: 'scroll up', action: 'scrollUp', when: ['detail', 'overlay'] },
  { keys: ['down', 'j'], description: 'scroll down', action: 'scrollDown', when: ['detail', 'overlay'] },
  { keys: ['pageup', 'b'], description: 'page up', action: 'pageUp', when: ['detail', 'overlay'] },
  { keys: ['pagedown', 'space'], description: 'page down', action: 'pageDown', when: ['detail', 'overlay'] },
  { keys: ['esc', 'q'], description: 'close', action: 'close', when: ['overlay'] },
  { keys: ['y'], description: 'yes', action: 'yes', when: ['confirm'] },
  { keys: ['n', 'esc'], description: 'no', action: 'no', when: ['confirm'] },
  { keys: ['enter'], description: 'apply the filter', action: 'filterAccept', when: ['filter'] },
  { keys: ['esc'], description: 'clear the filter', action: 'filterCancel', when: ['filter'] },
  { keys: ['backspace'], description: 'delete a character', action: 'filterBackspace', when: ['filter'] },
  { keys: ['q', 'ctrl+c'], description: 'quit', action: 'quit', hint: 'quit', when: VIEWS },
  { keys: ['ctrl+c'], description: 'quit', action: 'quit', when: ['overlay', 'confirm', 'filter'] },
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
  if (s.nav.filtering) return 'filter';
  if (s.nav.overlay) return 'overlay';
  return s.nav.level === 'detail' ? 'detail' : 'board';
}

/** The binding a key press triggers in a mode, if any. */
export function bindingFor(mode: Mode, name: string): Binding | undefined {
  return KEYMAP.find((b) => b.when.includes(mode) && b.keys.includes(name));
}

const shown = (k: string) =>
  ({ up: '↑', down: '↓', left: '←', right: '→', enter: 'enter', esc: 'esc', space: 'space' })[k] ?? k;

/** The status bar's key hints for a mode (at a level), from the table. */
export function keyHints(mode: Mode, level?: Level): string {
  return KEYMAP.filter(
    (b) => b.hint && b.when.includes(mode) && (!b.hintAt || !level || b.hintAt.includes(level)),
  )
    .map((b) => `${shown(b.keys[0]!)} ${b.hint}`)
    .join(' · ');
}

const ALL_MODES: Mode[] = ['board', 'detail', 'overlay', 'confirm', 'filter'];

/**
 * Help rows (keys, what they do) for the modes given, one row per action,
 * from the table. The `?` overlay shows every mode's, so the keys of the
 * confirmation and the filter box are documented too.
 */
export function helpRows(modes: Mode[] = ALL_MODES): [string, string][] {
  const rows: [string, string][] = [];
  const seen = new Set<string>();
  for (const b of KEYMAP) {
    if (!b.when.some((m) => modes.includes(m))) continue;
    const id = `${b.action}|${b.description}`;
    if (seen.has(id)) continue;
    seen.add(id);
    rows.push([b.keys.map(shown).join(' '), b.description]);
  }
  return rows;
}

/** The keys table as markdown, for the README (test/unit/keymap.test.ts checks the README matches). */
export function keymapMarkdown(): string {
  const rows = helpRows(ALL_MODES);
  return [
    '| Keys | What they do |',
    '| --- | --- |',
    ...rows.map(
      ([k, d]) =>
        `| ${k
          .split(' ')
          .map((x) => `\`${x === '|' ? '\\|' : x}\``)
          .join(' ')} | ${d} |`,
    ),
  ].join('\n');
}
