// What a key press means, without a store, a screen or a process: keyIntents
// on states built from jobs written with the real store's API, a case per
// context (board, detail, overlay, question, filter box, form, backlog), the
// facts the caller knows passed as plain values.
import { afterAll, describe, expect, it } from 'vitest';
import { keyIntents, keyPresses, NO_BACKLOG, type KeyFacts } from '../../src/dashboard/view/key-intent.js';
import { selectedCard } from '../../src/dashboard/view/board.js';
import type { KeyPress } from '../../src/dashboard/view/keymap.js';
import {
  EMPTY_BACKLOG,
  initialNav,
  type BacklogState,
  type Confirm,
  type DashboardState,
  type Nav,
} from '../../src/dashboard/view/state.js';
import { shortJobId } from '../../src/model/job-id.js';
import type { Job } from '../../src/model/job.js';
import type { Todo } from '../../src/model/todo.js';
import { openStateStore } from '../../src/state/index.js';
import { makeJob, REPO } from '../helpers/dash-fixture.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir('ii-key-intent-');
const store = openStateStore({ dir: tmp.path });
afterAll(() => {
  store.close();
  tmp.cleanup();
});

function state(
  jobs: Job[],
  o: { nav?: Partial<Nav>; backlog?: BacklogState; message?: string; stale?: string[] } = {},
): DashboardState {
  return {
    repo: REPO,
    repoLabel: '/src/demo',
    banner: null,
    jobs,
    todoTitles: {},
    backlog: o.backlog ?? EMPTY_BACKLOG,
    runner: null,
    stale: Object.fromEntries((o.stale ?? []).map((id) => [id, true])),
    live: {},
    files: {},
    iterationFiles: {},
    records: {},
    diffs: {},
    nav: { ...initialNav(), ...o.nav },
    logSize: { width: 80, height: 20 },
    message: o.message ?? null,
    color: false,
  };
}

/** What the caller knows, as plain values: the calls it got are kept. */
function facts(o: Partial<KeyFacts> = {}): KeyFacts & { asked: string[] } {
  const asked: string[] = [];
  return {
    inRepo: true,
    todoOf: (job) => {
      asked.push(`todo of ${job.id}`);
      return undefined;
    },
    todoAfterAbandon: (job) => {
      asked.push(`abandon fate of ${job.id}`);
      return 'Its todo opens again.';
    },
    asked,
    ...o,
  };
}

const K: Record<string, [string, KeyPress]> = {
  up: ['', { upArrow: true }],
  enter: ['\r', { return: true }],
  esc: ['', { escape: true }],
  backspace: ['', { backspace: true }],
};
const press = (s: DashboardState, key: string, f: KeyFacts = facts()) => {
  const [input, k] = K[key] ?? [key, {}];
  return keyIntents(s, input, k, f);
};
const asking = (s: DashboardState, key: string, f?: KeyFacts): Confirm => {
  const [first] = press(s, key, f);
  if (first?.type !== 'nav' || first.action.type !== 'confirm')
    throw new Error(`no question: ${JSON.stringify(first)}`);
  return first.action.confirm;
};

describe('keyIntents on the jobs board', () => {
  const active = makeJob(store, { title: 'running one' });
  it('moves, and asks nothing of the caller to do so', () => {
    const f = facts();
    expect(press(state([active]), 'j', f)).toEqual([{ type: 'nav', action: { type: 'move', dir: 'down' } }]);
    expect(press(state([active]), 'up', f)).toEqual([{ type: 'nav', action: { type: 'move', dir: 'up' } }]);
    expect(f.asked).toEqual([]);
  });

  it('a on a running job asks, saying what becomes of its todo; on an ended one says why not', () => {
    const f = facts();
    const c = asking(state([active]), 'a', f);
    expect(c).toEqual({
      kind: 'abandon',
      id: active.id,
      prompt: `Abandon job ${shortJobId(active.id)}? Its todo opens again.`,
    });
    expect(f.asked).toEqual([`abandon fate of ${active.id}`]);
    expect(asking(state([active], { stale: [active.id] }), 'a').prompt).toContain(
      '(its runner is gone: it is cleaned up here)',
    );
    const done = makeJob(store, { finish: 'completed' });
    expect(press(state([done]), 'a')).toEqual([
      { type: 'say', text: `job ${shortJobId(done.id)} is already completed` },
    ]);
  });

  it('r retries a running job at once (the retry refuses it); a failed one is asked about first', () => {
    expect(press(state([active]), 'r')).toEqual([{ type: 'retry', jobId: active.id }]);
    const failed = makeJob(store, { finish: 'failed' });
    const todo = { ...store.todos.get(REPO, failed.todo_id)!, status: 'open' as const };
    const f = facts({ todoOf: () => todo });
    const c = asking(state([failed]), 'r', f);
    expect(c.kind).toBe('retry');
    expect(c.prompt).toMatch(new RegExp(`^Retry job ${shortJobId(failed.id)} as a new job\\?`));
    // A closed todo is refused with its reason, no question.
    const closed = press(state([failed]), 'r', facts({ todoOf: () => ({ ...todo, status: 'closed' }) }));
    expect(closed).toHaveLength(1);
    expect(closed[0]!.type).toBe('say');
  });

  it('m asks the io side to plan the landing; with nothing selected, says so', () => {
    const done = makeJob(store, { finish: 'completed', changes: 1 });
    expect(press(state([done]), 'm')).toEqual([{ type: 'askLand', jobId: done.id }]);
    expect(press(state([]), 'm')).toEqual([{ type: 'say', text: 'no job selected' }]);
  });

  it('a message is cleared before the key does anything; q quits', () => {
    expect(press(state([active], { message: 'hello' }), 'q')).toEqual([
      { type: 'say', text: null },
      { type: 'quit' },
    ]);
  });

  it('[ away from an iterations board says where it works', () => {
    expect(press(state([active]), '[')).toEqual([
      { type: 'say', text: "[ and ] step between changes on a change's iterations board" },
    ]);
  });
});

describe('keyIntents drilling into a job', () => {
  const job = makeJob(store, { title: 'two changes', changes: 2, iterations: 2 });
  const commits = { level: 'commits' as const, jobId: job.id, change: 0 };

  it('enter on an iteration opens its detail and loads its record and diff', () => {
    const s = state([job], { nav: commits });
    // The iteration whose card the cursor sits on.
    const iteration = Number(selectedCard(s)!.key) + 1;
    expect(press(s, 'enter')).toEqual([
      { type: 'nav', action: { type: 'drill' } },
      { type: 'loadRecord', jobId: job.id },
      { type: 'loadDiff', jobId: job.id, change: 1, iteration },
    ]);
  });

  it('] steps to the next change; at the last one it says so', () => {
    expect(press(state([job], { nav: commits }), ']')).toEqual([
      { type: 'nav', action: { type: 'changeStep', delta: 1 } },
    ]);
    expect(press(state([job], { nav: { ...commits, change: 1 } }), ']')).toEqual([
      { type: 'nav', action: { type: 'changeStep', delta: 1 } },
      { type: 'say', text: 'this is the last change' },
    ]);
  });

  it('in the detail, j scrolls a line, g to the top; G (the log’s) means nothing there', () => {
    const detail = state([job], { nav: { ...commits, level: 'detail', iteration: 0, scroll: 7 } });
    expect(press(detail, 'j')).toEqual([{ type: 'nav', action: { type: 'scroll', delta: 1 } }]);
    expect(press(detail, 'g')).toEqual([{ type: 'nav', action: { type: 'scroll', delta: -7 } }]);
    expect(press(detail, 'G')).toEqual([]);
  });

  it('m marks the iteration; m on the marked one clears it; d then diffs another against it', () => {
    const s = state([job], { nav: { ...commits, level: 'detail', iteration: 0 } });
    expect(press(s, 'm')).toEqual([
      { type: 'nav', action: { type: 'mark', mark: { jobId: job.id, change: 1, iteration: 1 } } },
    ]);
    const marked = state([job], {
      nav: { ...commits, level: 'detail', iteration: 0, mark: { jobId: job.id, change: 1, iteration: 1 } },
    });
    expect(press(marked, 'm')).toEqual([
      { type: 'nav', action: { type: 'mark', mark: null } },
      { type: 'say', text: 'mark on 1.1 cleared' },
    ]);
    expect(press(marked, 'd')[0]).toMatchObject({ type: 'say' });
    const other = { ...marked, nav: { ...marked.nav, iteration: 1 } };
    expect(press(other, 'd')).toEqual([
      { type: 'loadDiff', jobId: job.id, change: 1, iteration: 2, from: { change: 1, iteration: 1 } },
      { type: 'nav', action: { type: 'overlay', overlay: 'diff' } },
    ]);
  });
});

describe('keyIntents in an overlay', () => {
  const job = makeJob(store);
  it('l loads the record and opens the log, where G follows its end and esc closes it', () => {
    expect(press(state([job]), 'l')).toEqual([
      { type: 'loadRecord', jobId: job.id },
      { type: 'nav', action: { type: 'overlay', overlay: 'logs' } },
    ]);
    const log = state([job], { nav: { overlay: 'logs' } });
    expect(press(log, 'G')).toEqual([{ type: 'nav', action: { type: 'logScroll', to: 'end' } }]);
    expect(press(log, 'esc')).toEqual([{ type: 'nav', action: { type: 'closeOverlay' } }]);
    // Another view scrolls by lines; a page is ten.
    const help = state([job], { nav: { overlay: 'help', scroll: 12 } });
    expect(press(help, ' ')).toEqual([{ type: 'nav', action: { type: 'scroll', delta: 10 } }]);
    expect(press(help, 'g')).toEqual([{ type: 'nav', action: { type: 'scroll', delta: -12 } }]);
  });
});

describe('keyIntents in a question', () => {
  const confirm = (kind: Confirm['kind']) => state([], { nav: { confirm: { kind, id: 'x1', prompt: '?' } } });
  it('y closes it and does what was asked, for each kind of question', () => {
    const done = (kind: Confirm['kind']) => press(confirm(kind), 'y').slice(1);
    expect(done('abandon')).toEqual([{ type: 'abandon', jobId: 'x1' }]);
    expect(done('retry')).toEqual([{ type: 'retry', jobId: 'x1' }]);
    expect(done('land')).toEqual([{ type: 'land', jobId: 'x1' }]);
    expect(done('start')).toEqual([{ type: 'startTodo', todoId: 'x1' }]);
    expect(done('closeTodo')).toEqual([{ type: 'closeTodo', todoId: 'x1' }]);
    expect(done('stopRunner')).toEqual([{ type: 'stopRunner' }]);
    expect(press(confirm('land'), 'y')[0]).toEqual({ type: 'nav', action: { type: 'closeConfirm' } });
  });

  it('n and esc say nothing was done; x abandons and closes the todo, only in the abandon question', () => {
    expect(press(confirm('retry'), 'n')).toEqual([
      { type: 'nav', action: { type: 'closeConfirm' } },
      { type: 'say', text: 'nothing retried' },
    ]);
    expect(press(confirm('stopRunner'), 'esc')[1]).toEqual({ type: 'say', text: 'the runner goes on' });
    expect(press(confirm('abandon'), 'x')).toEqual([
      { type: 'nav', action: { type: 'closeConfirm' } },
      { type: 'abandon', jobId: 'x1', closeTodo: true },
    ]);
    expect(press(confirm('retry'), 'x')).toEqual([]);
  });
});

describe('keyIntents in the filter box', () => {
  const s = state([], { nav: { filtering: true } });
  it('takes typed text as the filter (q too), enter applies it, backspace deletes', () => {
    expect(press(s, 'q')).toEqual([{ type: 'nav', action: { type: 'filterInput', text: 'q' } }]);
    expect(press(s, 'enter')).toEqual([{ type: 'nav', action: { type: 'filterAccept' } }]);
    expect(press(s, 'backspace')).toEqual([{ type: 'nav', action: { type: 'filterBackspace' } }]);
    expect(keyIntents(s, 'c', { ctrl: true }, facts())).toEqual([{ type: 'quit' }]);
  });
});

describe('keyIntents in the new-todo form', () => {
  const form = (field: 'title' | 'description', text: string) =>
    state([], { nav: { form: { field, values: { title: 't' }, text } } });
  it('typed text is the field; enter on an empty title says why; after the description the todo is created', () => {
    expect(press(form('title', ''), 'x')).toEqual([
      { type: 'nav', action: { type: 'formInput', text: 'x' } },
    ]);
    const empty = press(form('title', '  '), 'enter');
    expect(empty).toHaveLength(1);
    expect(empty[0]).toMatchObject({ type: 'say' });
    expect(press(form('title', 'Fix it'), 'enter')).toEqual([
      { type: 'nav', action: { type: 'formNext' } },
      { type: 'say', text: expect.stringMatching(/^new todo · /) },
    ]);
    expect(press(form('description', ''), 'enter')).toEqual([
      { type: 'nav', action: { type: 'formNext' } },
      { type: 'createTodo' },
    ]);
    expect(press(form('title', 'x'), 'esc')).toEqual([
      { type: 'nav', action: { type: 'formCancel' } },
      { type: 'say', text: 'nothing created' },
    ]);
  });
});

describe('keyIntents on the backlog', () => {
  const todo = (title: string): Todo => store.todos.create(REPO, { title });
  it('n opens the form inside a repository and says why not outside one', () => {
    expect(press(state([]), 'n')[0]).toEqual({ type: 'nav', action: { type: 'formStart' } });
    expect(press(state([]), 'n', facts({ inRepo: false }))).toEqual([{ type: 'say', text: NO_BACKLOG }]);
  });

  it('s starts a ready todo at once and asks about a blocked one; without a todo selected, says how', () => {
    const ready = todo('ready one');
    expect(press(state([], { backlog: { ready: [ready], blocked: [] } }), 's')).toEqual([
      { type: 'startTodo', todoId: ready.id },
    ]);
    const held = todo('held one');
    const blocked = state([], {
      backlog: {
        ready: [],
        blocked: [{ todo: held, blockers: [{ kind: 'job', job_id: 'abcdef12', stale: false }] }],
      },
    });
    const c = asking(blocked, 's');
    expect(c).toMatchObject({ kind: 'start', id: held.id });
    expect(c.prompt).toContain('held by job abcdef12');
    expect(press(state([]), 's')).toEqual([
      { type: 'say', text: 's starts a todo: select one in the Backlog column' },
    ]);
  });

  it('x asks before closing; e edits; R, + and - go to the runner', () => {
    const t = todo('close me');
    const s = state([], { backlog: { ready: [t], blocked: [] } });
    expect(asking(s, 'x')).toMatchObject({ kind: 'closeTodo', id: t.id });
    expect(press(s, 'e')).toEqual([{ type: 'editTodo', todoId: t.id }]);
    expect(press(s, 'R')).toEqual([{ type: 'toggleRunner' }]);
    expect(press(s, '+')).toEqual([{ type: 'changeSlots', delta: 1 }]);
    expect(press(s, '-')).toEqual([{ type: 'changeSlots', delta: -1 }]);
  });
});

describe('keyPresses', () => {
  it('splits keys that came in one read, one by one; a named key or a lone character stays whole', () => {
    expect(keyPresses('jj\r', {})).toEqual([
      ['j', {}],
      ['j', {}],
      ['\r', { return: true }],
    ]);
    expect(keyPresses('j', {})).toEqual([['j', {}]]);
    expect(keyPresses('[A', { upArrow: true })).toEqual([['[A', { upArrow: true }]]);
  });
});
