// A store whose write lock another process holds: a writer waits its turn past
// SQLite's own 10 s busy timeout, and past its bound stops with a clear
// UserError that changes nothing (never "database is locked" as an internal error).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateStore } from '../../src/state/index.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir, waitFor } from '../helpers/tmp.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'state-busy.mjs');
let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir()));
afterEach(() => tmp.cleanup());

function proc(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [FIXTURE, ...args], {
    env: { ...process.env, XDG_STATE_HOME: tmp.path, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, done, out: () => out, err: () => err };
}

function setup() {
  const dir = join(tmp.path, 'incrementum');
  const store = openStateStore({ dir });
  const dbPath = store.dbPath;
  store.close();
  return { dir, dbPath };
}

const jobsIn = (dir: string) => {
  const store = openStateStore({ dir });
  try {
    return store.jobs.list('busy');
  } finally {
    store.close();
  }
};

describe('a busy state store', () => {
  it('a writer waits for a lock held longer than SQLite’s 10 s busy timeout, then writes', async () => {
    const { dir, dbPath } = setup();
    const holder = proc(['hold', dbPath]);
    try {
      await waitFor(() => holder.out().includes('locked'), 'the holder to take the lock');
      const writer = proc(['write', 'a']);
      await waitFor(() => writer.out().includes('begin'), 'the writer to start its write');
      // The input of this test, not a wait for a condition: the lock is held
      // for longer than one busy timeout (10 s) before it is let go.
      const until = Date.now() + 12_000;
      await waitFor(() => Date.now() > until || writer.child.exitCode !== null, 'the hold', 30_000, 100);
      holder.child.stdin.end();
      const code = await writer.done;
      expect(writer.out(), writer.err()).toMatch(/^created /m);
      expect(code).toBe(0);
      expect(jobsIn(dir)).toHaveLength(1);
    } finally {
      holder.child.stdin.end();
      await holder.done;
    }
  }, 60_000);

  it('past its bound a writer stops with a UserError naming the file, and changes nothing', async () => {
    const { dir, dbPath } = setup();
    const holder = proc(['hold', dbPath]);
    try {
      await waitFor(() => holder.out().includes('locked'), 'the holder to take the lock');
      const writer = proc(['write', 'b'], { II_STATE_BUSY_MS: '1500' });
      const code = await writer.done;
      expect(code, writer.err()).toBe(3);
      const out = writer.out();
      expect(out).toContain(`UserError: state database ${dbPath} stayed busy for`);
      expect(out).toContain('nothing was changed');
      expect(out).toContain('II_STATE_BUSY_MS');
      expect(out).not.toMatch(/database is locked/);
    } finally {
      holder.child.stdin.end();
      await holder.done;
    }
    expect(jobsIn(dir)).toHaveLength(0);
  }, 60_000);
});
