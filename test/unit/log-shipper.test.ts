// The log shipper (state/log-shipper.ts): a job's lines reach the store in
// batches and in order, at once at a stage's end, and none is lost while the
// store cannot be reached (kept, sent again, one warning each way); a
// transcript's flooding turn is capped in the store as in its file.
import { afterEach, describe, expect, it } from 'vitest';
import { LogShipper } from '../../src/state/log-shipper.js';
import { waitFor } from '../helpers/tmp.js';

/** A store that records each append, and fails while `down`. */
function fakeStore() {
  const got: { jobId: string; stream: string; lines: string[] }[] = [];
  const s = {
    down: false,
    got,
    async append(jobId: string, stream: string, lines: readonly string[]) {
      await new Promise((r) => setImmediate(r));
      if (s.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      got.push({ jobId, stream, lines: [...lines] });
      return got.reduce((n, g) => n + g.lines.length, 0);
    },
    lines: (stream?: string) => got.filter((g) => !stream || g.stream === stream).flatMap((g) => g.lines),
  };
  return s;
}

let shipper: LogShipper | null = null;
afterEach(async () => {
  await shipper?.close(0);
  shipper = null;
});

describe('LogShipper', () => {
  it('sends lines in batches, in order, and at once when told (a stage’s end)', async () => {
    const store = fakeStore();
    shipper = new LogShipper({ store, warn: () => {}, flushMs: 60_000 });
    for (let i = 0; i < 10; i++) shipper.event('j', `e${i}`);
    shipper.add('j', 'transcript:a', ['t0', 't1']);
    shipper.event('j', 'stage', true);
    await waitFor(() => store.lines().length === 13, 'the stage sent what waited');
    expect(store.got.map((g) => [g.stream, g.lines.length])).toEqual([
      ['events', 10],
      ['transcript:a', 2],
      ['events', 1],
    ]);
    expect(store.lines()).toEqual([...Array.from({ length: 10 }, (_, i) => `e${i}`), 't0', 't1', 'stage']);
  });

  it('sends after flushMs, or when batchLines wait', async () => {
    const store = fakeStore();
    shipper = new LogShipper({ store, warn: () => {}, flushMs: 30, batchLines: 5 });
    shipper.event('j', 'a');
    await waitFor(() => store.lines().length === 1, 'the timer sent it');
    shipper = new LogShipper({ store, warn: () => {}, flushMs: 60_000, batchLines: 5 });
    for (let i = 0; i < 5; i++) shipper.event('k', `k${i}`);
    await waitFor(() => store.lines().length === 6, 'five waiting sent them');
  });

  it('keeps what the store could not take and sends it again, warning once each way', async () => {
    const store = fakeStore();
    const warnings: string[] = [];
    shipper = new LogShipper({ store, warn: (m) => warnings.push(m), flushMs: 5, retryMs: 10 });
    store.down = true;
    for (let i = 0; i < 50; i++) shipper.event('j', `e${i}`);
    await waitFor(() => warnings.length === 1, 'a warning');
    expect(warnings[0]).toMatch(
      /the shared store could not take job j's log lines \(connect ECONNREFUSED .*\); they are kept and sent again/,
    );
    for (let i = 50; i < 60; i++) shipper.event('j', `e${i}`);
    await new Promise((r) => setTimeout(r, 50));
    expect(store.lines()).toEqual([]);
    expect(warnings).toHaveLength(1);
    store.down = false;
    await waitFor(() => store.lines().length === 60, 'all sent once the store is back');
    expect(store.lines()).toEqual(Array.from({ length: 60 }, (_, i) => `e${i}`));
    expect(warnings[1]).toMatch(/takes job j's log lines again/);
  });

  it('close sends what is left, or says how many lines only the local files have', async () => {
    const store = fakeStore();
    const warnings: string[] = [];
    shipper = new LogShipper({ store, warn: (m) => warnings.push(m), flushMs: 60_000, retryMs: 10 });
    shipper.event('j', 'last');
    expect(await shipper.close()).toBe(0);
    expect(store.lines()).toEqual(['last']);
    const down = fakeStore();
    down.down = true;
    shipper = new LogShipper({ store: down, warn: (m) => warnings.push(m), retryMs: 10 });
    shipper.event('j9', 'a');
    shipper.event('j9', 'b');
    expect(await shipper.close(100)).toBe(2);
    expect(warnings.at(-1)).toMatch(
      /^2 lines of job j9's log could not be sent to the shared store \(connect ECONNREFUSED .*\): they are in this machine's state dir only/,
    );
    // Closed: nothing more is taken.
    shipper.event('j9', 'c');
    expect(shipper.waiting).toBe(2);
  });

  it('drops the oldest lines past maxBufferedBytes while the store is away, and says so in the store', async () => {
    const store = fakeStore();
    shipper = new LogShipper({ store, warn: () => {}, flushMs: 5, retryMs: 10, maxBufferedBytes: 100 });
    store.down = true;
    for (let i = 0; i < 30; i++) shipper.event('j', `line-${String(i).padStart(2, '0')}`);
    await new Promise((r) => setTimeout(r, 30));
    store.down = false;
    await waitFor(() => shipper!.waiting === 0 && store.lines().length > 0, 'sent');
    const lines = store.lines();
    expect(lines[0]).toMatch(/"type":"warning".*"message":"\d+ lines of this job's log could not be kept/);
    // The newest lines are there, in order.
    expect(lines.at(-1)).toBe('line-29');
    const kept = lines.slice(1);
    expect(kept).toEqual([...kept].sort());
    expect(kept.join('').length).toBeLessThanOrEqual(100 + 7);
  });

  it('caps a transcript’s turn in the store: its head as it comes, its end at the turn’s end, a marker between', async () => {
    const store = fakeStore();
    shipper = new LogShipper({ store, warn: () => {}, flushMs: 5 });
    const sink = shipper.transcript('j', 'a1', 4000); // head 2000 B, tail 1000 B
    const line = (i: number) => `{"n":${String(i).padStart(4, '0')},"pad":"${'x'.repeat(80)}"}`; // 99 B and its newline
    for (let i = 0; i < 100; i++) sink.lines([line(i)]);
    await shipper.flush();
    const head = store.lines('transcript:a1');
    expect(head).toEqual(Array.from({ length: 20 }, (_, i) => line(i))); // 20 × 100 B: the first half
    sink.beginTurn();
    sink.lines([line(1000)]);
    sink.end();
    await waitFor(() => store.lines('transcript:a1').includes(line(1000)), 'the next turn sent');
    const all = store.lines('transcript:a1');
    const marker = all[20]!;
    expect(JSON.parse(marker)).toMatchObject({ type: 'warning', dropped: { messages: 70, bytes: 7000 } });
    // The turn's newest lines that fit a quarter of the cap (10 × 100 B), then the next turn.
    expect(all.slice(21)).toEqual([...Array.from({ length: 10 }, (_, i) => line(90 + i)), line(1000)]);
  });
});

describe('LogShipper batches', () => {
  it('sends what piled up in appends of at most 2,000 lines, in order', async () => {
    const store = fakeStore();
    const s = new LogShipper({ store, warn: () => {}, flushMs: 60_000, batchLines: 1e9 });
    const lines = Array.from({ length: 4500 }, (_, i) => `l${i}`);
    s.add('j', 'events', lines);
    s.event('j', 'after');
    expect(await s.close()).toBe(0);
    expect(store.got.map((g) => g.lines.length)).toEqual([2000, 2000, 501]);
    expect(store.lines()).toEqual([...lines, 'after']);
  });
});
