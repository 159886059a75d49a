// The keymap is one table for the handler, the `?` help and the README: these
// check that every binding in it does something, is shown, and is unambiguous.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import {
  bindingFor,
  helpRows,
  KEYMAP,
  keyName,
  keymapMarkdown,
  modeOf,
  type KeyPress,
  type Mode,
} from '../../src/dashboard/view/keymap.js';
import type { Level } from '../../src/dashboard/view/state.js';

const LEVELS: Level[] = ['jobs', 'changes', 'commits', 'detail'];
import type { NavAction } from '../../src/dashboard/view/nav.js';
import { initialNav } from '../../src/dashboard/view/state.js';
import { dashFixture, makeJob, type DashFixture } from '../helpers/dash-fixture.js';

let fx: DashFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

/** What Ink reports for a key the table names. */
function press(name: string): [string, KeyPress] {
  const special: Record<string, [string, KeyPress]> = {
    up: ['', { upArrow: true }],
    down: ['', { downArrow: true }],
    left: ['', { leftArrow: true }],
    right: ['', { rightArrow: true }],
    pageup: ['', { pageUp: true }],
    pagedown: ['', { pageDown: true }],
    enter: ['\r', { return: true }],
    esc: ['', { escape: true }],
    backspace: ['', { backspace: true }],
    space: [' ', {}],
  };
  if (special[name]) return special[name];
  if (name.startsWith('ctrl+')) return [name.slice(5), { ctrl: true }];
  expect(name, 'a key name the handler can produce').toHaveLength(1);
  return [name, {}];
}

it('every binding, in every mode it is live in, reaches a handler that acts', () => {
  fx = dashFixture();
  const f = fx;
  const drillable = makeJob(f.state, { title: 'drill', changes: 1, iterations: 2 });
  makeJob(f.state, { title: 'testing', stage: 'testing' });
  makeJob(f.state, { title: 'done', finish: 'completed' });
  f.sync.loadAll();
  const real = f.dash.getState().dispatch;
  // A binding live at some levels only is tried at the first of them its mode reaches.
  const enter: Record<Mode, (level?: Level) => void> = {
    board: (level) => {
      for (let i = 0; i < LEVELS.indexOf(level ?? 'jobs'); i++) real({ type: 'drill' });
    },
    detail: () => {
      // The drillable job is the newest: the board opens on it.
      for (let i = 0; i < 3; i++) real({ type: 'drill' });
    },
    overlay: () => real({ type: 'overlay', overlay: 'help' }),
    confirm: () => real({ type: 'confirm', confirm: { kind: 'abandon', id: drillable.id, prompt: '?' } }),
    filter: () => real({ type: 'filterStart' }),
    form: () => real({ type: 'formStart' }),
    ask: () => real({ type: 'overlay', overlay: 'ask' }),
    note: () => real({ type: 'noteStart', jobId: drillable.id, askId: 1 }),
  };
  const acted: string[] = [];
  // The side-effecting actions are recorded, not run: no process, no control request.
  f.actions.abandon = async (id) => void acted.push(`abandon ${id}`);
  f.actions.retry = (id) => void acted.push(`retry ${id}`);
  f.actions.askLand = async (id) => void acted.push(`askLand ${id}`);
  f.actions.land = (id) => void acted.push(`land ${id}`);
  f.actions.createTodo = () => void acted.push('createTodo');
  f.actions.startTodo = (id) => void acted.push(`startTodo ${id}`);
  f.actions.closeTodo = (id) => void acted.push(`closeTodo ${id}`);
  f.actions.editTodo = (id) => void acted.push(`editTodo ${id}`);
  f.actions.toggleRunner = () => void acted.push('toggleRunner');
  f.actions.changeSlots = (n) => void acted.push(`changeSlots ${n}`);
  f.actions.loadDiff = async () => void acted.push('loadDiff');
  f.actions.answer = (id, _ask, answer) => void acted.push(`answer ${id} ${answer}`);
  f.dash.setState({
    dispatch: (a: NavAction) => {
      acted.push(a.type);
      real(a);
    },
  });
  for (const b of KEYMAP)
    for (const mode of b.when)
      for (const k of b.keys) {
        f.dash.setState({ nav: initialNav(), message: null });
        enter[mode](b.levels?.find((l) => (mode === 'detail') === (l === 'detail')));
        expect(modeOf(f.dash.getState()), `set-up of ${mode}`).toBe(mode);
        acted.length = 0;
        const quits = f.quits;
        const [input, key] = press(k);
        expect(keyName(input, key)).toBe(k);
        f.actions.key(input, key);
        const said = f.dash.getState().message;
        expect(
          acted.length > 0 || said != null || f.quits > quits,
          `${k} (${b.action}) in ${mode} did nothing`,
        ).toBe(true);
      }
});

it('every binding is in the help overlay, with all its keys', () => {
  const rows = helpRows();
  for (const b of KEYMAP) {
    const row = rows.find(([, d]) => d.split(' · ').includes(b.description));
    expect(row, b.description).toBeDefined();
    const shownKeys = row![0].split(' ');
    for (const k of b.keys) {
      const glyph = { up: '↑', down: '↓', left: '←', right: '→' }[k] ?? k;
      expect(shownKeys, `${k} for ${b.description}`).toContain(glyph);
    }
  }
});

it('one binding per key in each mode and level, so a key never means two things at once', () => {
  const seen = new Map<string, string>();
  for (const b of KEYMAP)
    for (const m of b.when)
      for (const level of b.levels ?? LEVELS)
        for (const k of b.keys) {
          const key = `${m}:${level}:${k}`;
          expect(seen.get(key), `${k} in ${m} at ${level}`).toBeUndefined();
          seen.set(key, b.action);
          expect(bindingFor(m, k, level)).toBe(b);
        }
});

it('m lands a job on the jobs board and marks an iteration below it', () => {
  expect(bindingFor('board', 'm', 'jobs')?.action).toBe('land');
  for (const level of ['changes', 'commits'] as const)
    expect(bindingFor('board', 'm', level)?.action).toBe('mark');
  expect(bindingFor('detail', 'm', 'detail')?.action).toBe('mark');
});

it("the README's key table is the keymap's", () => {
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Dashboard\n'));
  const lines = section.slice(section.indexOf('\n| Keys') + 1).split('\n');
  const table = lines.slice(
    0,
    lines.findIndex((l) => !l.startsWith('|')),
  );
  const cells = (row: string) =>
    row
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim().replace(/\s+/g, ' '));
  expect(table.slice(2).map(cells)).toEqual(keymapMarkdown().split('\n').slice(2).map(cells));
});

it('names keys as the table spells them', () => {
  expect(keyName('', { upArrow: true })).toBe('up');
  expect(keyName('\r', { return: true })).toBe('enter');
  expect(keyName('c', { ctrl: true })).toBe('ctrl+c');
  expect(keyName(' ', {})).toBe('space');
  expect(keyName('', { delete: true })).toBe('backspace');
  expect(bindingFor('board', 'l')?.action).toBe('logs');
  expect(bindingFor('confirm', 'q')).toBeUndefined();
});
