// The job log store (api.ts JobLogStore) on both drivers: a job's events and
// transcripts as numbered lines, read after the last seq seen, appended in
// batches by writers on several connections (two processes, two machines) at
// once, and on PostgreSQL followed through LISTEN/NOTIFY.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { DRIVERS, type DriverFixture } from '../helpers/store-drivers.js';
import { waitFor } from '../helpers/tmp.js';

const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe.each(DRIVERS)('job log store on $name', (driver) => {
  let f: DriverFixture;
  let s: AsyncStateStore;
  beforeEach(async (ctx) => {
    if (driver.skip) {
      ctx.skip(driver.skip);
      return;
    }
    f = await driver.make();
    s = await f.connect();
  });
  afterEach(async () => {
    await f?.cleanup();
  });

  it('numbers a job’s lines across its streams and reads them after a seq, by stream or all', async () => {
    expect(await s.logs.append('j1', 'events', [])).toBe(0);
    expect(await s.logs.read('j1')).toEqual([]);
    expect(await s.logs.append('j1', 'events', ['{"type":"stage"}', 'e2'])).toBe(2);
    // Text is kept as written: control characters and all (it is escaped where it is shown).
    const hostile = 'say \u001b]0;owned\u0007 "quoted" \\ back\nslash';
    expect(await s.logs.append('j1', 'transcript:a1', ['t1', hostile])).toBe(4);
    expect(await s.logs.append('j2', 'events', ['other'])).toBe(1);
    expect(await s.logs.read('j1')).toEqual([
      { seq: 1, stream: 'events', line: '{"type":"stage"}' },
      { seq: 2, stream: 'events', line: 'e2' },
      { seq: 3, stream: 'transcript:a1', line: 't1' },
      { seq: 4, stream: 'transcript:a1', line: hostile },
    ]);
    expect((await s.logs.read('j1', { after: 2 })).map((l) => l.seq)).toEqual([3, 4]);
    expect((await s.logs.read('j1', { stream: 'events' })).map((l) => l.line)).toEqual([
      '{"type":"stage"}',
      'e2',
    ]);
    expect((await s.logs.read('j1', { stream: 'transcript:a1', after: 3 })).map((l) => l.seq)).toEqual([4]);
    expect((await s.logs.read('j1', { limit: 3 })).map((l) => l.seq)).toEqual([1, 2, 3]);
    expect(await s.logs.heads(['j1', 'j2', 'none'])).toEqual({ j1: 4, j2: 1 });
    expect(await s.logs.heads([])).toEqual({});
  });

  it('appends a batch of thousands of lines in one write, in order', async () => {
    const batch = lines('line ', 5000);
    expect(await s.logs.append('big', 'transcript:x', batch)).toBe(5000);
    const back = await s.logs.read('big');
    expect(back.map((l) => l.line)).toEqual(batch);
    expect(back.map((l) => l.seq)).toEqual(batch.map((_, i) => i + 1));
  });

  it('keeps each job’s numbers whole and gapless under concurrent appenders on other connections', async () => {
    const others = [await f.connect(), await f.connect()];
    const writers = [s, ...others];
    // Three writers, two jobs: each writer appends 20 batches of 5 to both jobs at once.
    await Promise.all(
      writers.flatMap((w, k) =>
        ['ja', 'jb'].map(async (job) => {
          for (let b = 0; b < 20; b++) await w.logs.append(job, 'events', lines(`${job}-w${k}-b${b}-`, 5));
        }),
      ),
    );
    for (const job of ['ja', 'jb']) {
      const all = await s.logs.read(job);
      expect(all.map((l) => l.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
      // Every batch is there once, its five lines together and in order.
      const byBatch = new Map<string, number[]>();
      for (const l of all) {
        const [, w, b, i] = /^j.-(w\d)-(b\d+)-(\d)$/.exec(l.line)!;
        const key = `${w}${b}`;
        byBatch.set(key, [...(byBatch.get(key) ?? []), Number(i)]);
      }
      expect(byBatch.size).toBe(60);
      for (const v of byBatch.values()) expect(v).toEqual([0, 1, 2, 3, 4]);
      expect(all.every((l) => l.line.startsWith(`${job}-`))).toBe(true);
    }
    expect(await others[0]!.logs.heads(['ja', 'jb'])).toEqual({ ja: 300, jb: 300 });
  });

  it.runIf(driver.name === 'postgres')(
    'tells a watcher on another connection of each append, with the job and its last seq',
    async () => {
      const other = await f.connect();
      const seen: [string | null, number][] = [];
      const stop = await other.watchLogs!((job, seq) => seen.push([job, seq]));
      try {
        await s.logs.append('job 1', 'events', ['a', 'b']);
        await s.logs.append('j2', 'transcript:t', ['c']);
        await waitFor(() => seen.length >= 2, 'two notices', 10_000);
        expect(seen).toEqual([
          ['job 1', 2],
          ['j2', 1],
        ]);
        // The store version is not bumped by a log line: the board reloads no job for one.
        expect(await other.jobs.version()).toBe(0);
      } finally {
        await stop();
      }
    },
  );

  it.runIf(driver.name === 'sqlite')('has no watch: SQLite’s readers follow the files', () => {
    expect(s.watchLogs).toBeUndefined();
  });
});
