// The stores of a state store are made on first use (state/lazy-stores.ts):
// making one prepares its statements, and a short command (ii job list) must
// pay for the jobs store's alone. Counted at node:sqlite's prepare, through
// the SQLite store and through its asynchronous face.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openStateStore } from '../../src/state/index.js';
import { STORE_NAMES } from '../../src/state/lazy-stores.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let prepares: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  tmp = tempDir();
  prepares = vi.spyOn(DatabaseSync.prototype, 'prepare');
});
afterEach(() => {
  prepares.mockRestore();
  tmp.cleanup();
});

const count = () => prepares.mock.calls.length;

describe.each([
  ['the SQLite store', (dir: string) => openStateStore({ dir })],
  ['its asynchronous face', (dir: string) => asyncStore(openStateStore({ dir }))],
])('%s', (_name, open) => {
  it('prepares a store’s statements when it is first read, once, and no other’s', async () => {
    const store = open(join(tmp.path, 'incrementum'));
    try {
      const opened = count();
      const jobs = store.jobs;
      const afterJobs = count();
      expect(afterJobs).toBeGreaterThan(opened);
      expect(store.jobs).toBe(jobs);
      expect(count()).toBe(afterJobs);
      await store.jobs.list('/repo');
      void store.todos;
      expect(count()).toBeGreaterThan(afterJobs);
    } finally {
      await store.close();
    }
  });

  it('holds all nine stores, each working', async () => {
    const store = open(join(tmp.path, 'incrementum'));
    try {
      expect(Object.keys(store)).toEqual(expect.arrayContaining([...STORE_NAMES]));
      for (const name of STORE_NAMES) expect(typeof store[name]).toBe('object');
      expect(await store.todos.list('/repo')).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
