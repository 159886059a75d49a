import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateStore } from '../../src/state/index.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const WRITER = join(ROOT, 'test', 'fixtures', 'state-writer.mjs');
let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir()));
afterEach(() => tmp.cleanup());

function writer(tag: string, count: number) {
  const child = spawn(process.execPath, [WRITER, tag, String(count)], {
    env: { ...process.env, XDG_STATE_HOME: tmp.path },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, done, out: () => out, err: () => err };
}

/** The mutations a writer reported as committed (complete lines only). */
function committed(out: string): string[] {
  return out
    .split('\n')
    .slice(0, -1)
    .filter((l) => l.startsWith('commit '))
    .map((l) => l.split(' ')[2]!);
}

describe('many processes on one state dir', () => {
  it('16 processes × 100 mutations: all 1,600 are there', async () => {
    // Opening creates the schema once, so the writers race only on data.
    openStateStore({ dir: join(tmp.path, 'incrementum') }).close();
    const ws = Array.from({ length: 16 }, (_, i) => writer(`w${i}`, 100));
    const results = await Promise.all(ws.map((w) => w.done));
    results.forEach((r, i) => expect(r, ws[i]!.err()).toEqual({ code: 0, signal: null }));
    const store = openStateStore({ dir: join(tmp.path, 'incrementum'), integrityCheck: true });
    const jobs = store.jobs.list('concurrency');
    store.close();
    expect(jobs).toHaveLength(16);
    const ids = jobs.flatMap((j) => j.changes.flatMap((c) => c.commits.map((k) => k.commit_id)));
    expect(ids).toHaveLength(1600);
    expect(new Set(ids).size).toBe(1600);
  });

  it('writers SIGKILLed at random moments leave an intact database with every committed mutation', async () => {
    openStateStore({ dir: join(tmp.path, 'incrementum') }).close();
    const ws = Array.from({ length: 6 }, (_, i) => writer(`k${i}`, 100_000));
    // Kill each writer once it has committed a random number of mutations.
    await Promise.all(
      ws.map(async (w) => {
        const target = 20 + Math.floor(Math.random() * 300);
        const end = Date.now() + 30_000;
        while (committed(w.out()).length < target && Date.now() < end)
          await new Promise((r) => setImmediate(r));
        w.child.kill('SIGKILL');
        await w.done;
      }),
    );
    const store = openStateStore({ dir: join(tmp.path, 'incrementum'), integrityCheck: true });
    const stored = new Set(
      store.jobs
        .list('concurrency')
        .flatMap((j) => j.changes.flatMap((c) => c.commits.map((k) => k.commit_id))),
    );
    store.close();
    for (const w of ws) {
      const mine = committed(w.out());
      expect(mine.length).toBeGreaterThan(0);
      for (const id of mine) expect(stored.has(id), `${id} was reported committed`).toBe(true);
    }
  });
});
