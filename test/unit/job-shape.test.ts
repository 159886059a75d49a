// Jobs read from the store are plain objects with one shared shape: read
// field by field by keyed store, V8 made each job (27 keys and more) a dictionary,
// 2.4× the memory (the dashboard's 10,000 jobs: 27 MB of heap against 11;
// bench/dashboard.bench.js's RSS row).
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let store: StateStore;
beforeEach(() => {
  tmp = tempDir();
  store = openStateStore({ dir: join(tmp.path, 'incrementum') });
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

// V8's own answer, through its natives syntax (allowed for code compiled after the flag is set).
setFlagsFromString('--allow-natives-syntax');
const fast = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

it('reads jobs, their changes and commits as fast objects sharing one shape', () => {
  const todo = store.todos.create('r', { title: 't' });
  for (let i = 0; i < 2; i++) {
    const job = store.jobs.create('r', { todo_id: todo.id, pid: 1, host: 'h' });
    store.jobs.appendChange(job.id, `I${i}`);
    store.jobs.appendCommit(job.id, {
      commit_id: `c${i}`,
      draft_message: 'feat: x',
      files: [{ path: 'a.ts', abs_path: null, is_new: false, is_deleted: false, additions: 1, deletions: 0 }],
    });
    store.jobs.updateCurrentCommit(job.id, { tests_passed: true });
  }
  const [a, b] = store.jobs.list('r');
  expect(Object.keys(a!).length).toBeGreaterThan(20);
  expect(fast(a!)).toBe(true);
  expect(sameMap(a!, b!)).toBe(true);
  expect(fast(a!.changes[0]!.commits[0]!)).toBe(true);
  expect(fast(store.todos.get('r', todo.id)!)).toBe(true);
  expect(store.jobs.get(a!.id)).toEqual(a);
});
