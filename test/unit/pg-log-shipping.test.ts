// A job's log into PostgreSQL when the server ends its sessions mid-job (an
// administrator, a restart): the shipper keeps what could not be sent and
// sends it again, and a follower on another connection (the watch) comes
// back and reads on from the last seq it saw: every line arrives once, in
// order, on both sides.
import { beforeEach, describe, expect, it } from 'vitest';
import { StoredJobLog, followStoredLog } from '../../src/job-log/store-source.js';
import type { AsyncStateStore } from '../../src/state/async-api.js';
import { LogShipper } from '../../src/state/log-shipper.js';
import { pgServer, pgWhyNot } from '../helpers/pg.js';
import { usePgDatabase } from '../helpers/pg-database.js';
import { waitFor } from '../helpers/tmp.js';

const server = pgServer();

describe.skipIf(!server)(
  `job logs over a lost connection${server ? '' : ` (skipped: ${pgWhyNot()})`}`,
  () => {
    const db = usePgDatabase();
    let writer: AsyncStateStore;
    let reader: AsyncStateStore;
    beforeEach(async () => {
      writer = await db.open();
      reader = await db.open();
    });

    it('every line reaches the store and a follower once, in order, across ended sessions', async () => {
      const warnings: string[] = [];
      const shipper = new LogShipper({
        store: writer.logs,
        warn: (m) => warnings.push(m),
        flushMs: 5,
        retryMs: 20,
      });
      const log = new StoredJobLog('job1');
      const followed: string[] = [];
      const stop = await followStoredLog(reader, log, (got) => followed.push(...got.map((g) => g.line)));
      const want: string[] = [];
      let ended = 0;
      try {
        for (let round = 0; round < 4; round++) {
          for (let i = 0; i < 50; i++) {
            const line = JSON.stringify({ type: 'info', message: `round ${round} line ${i}` });
            want.push(line);
            shipper.add('job1', i % 2 ? 'events' : 'transcript:a', [line]);
          }
          // Sent (a pooled session holds the last write), then more waiting when the
          // server ends every session: the writer's and the follower's watch.
          await waitFor(() => shipper.waiting === 0, 'the round sent', 30_000);
          for (let i = 0; i < 20; i++) {
            const line = JSON.stringify({ type: 'info', message: `round ${round} more ${i}` });
            want.push(line);
            shipper.event('job1', line);
          }
          ended += db.terminate();
        }
        expect(ended).toBeGreaterThan(0);
        expect(await shipper.close(30_000)).toBe(0);
        const stored = (await writer.logs.read('job1')).map((l) => l.line);
        expect(stored).toEqual(want);
        await waitFor(() => followed.length >= want.length, 'the follower caught up', 30_000);
        expect(followed).toEqual(want);
        expect(warnings.some((w) => /could not take job job1's log lines/.test(w))).toBe(true);
        expect(warnings.at(-1)).toMatch(/takes job job1's log lines again/);
      } finally {
        await stop();
      }
    });

    it('a batch whose append committed but whose reply was lost is stored once, with another appender of the job between', async () => {
      const warnings: string[] = [];
      let lose = 0; // appends to commit and then fail, as a reply lost with the connection
      let fail = 0; // appends to fail before reaching the store
      const store = {
        append: async (jobId: string, stream: string, lines: readonly string[]) => {
          if (fail > 0) {
            fail--;
            throw new Error('Connection terminated unexpectedly');
          }
          const seq = await writer.logs.append(jobId, stream, lines);
          if (lose > 0) {
            lose--;
            // Another machine (a landing) appends to the job before the resend.
            await reader.logs.append(jobId, 'events', ['{"landing":"elsewhere"}']);
            throw new Error('Connection terminated unexpectedly');
          }
          return seq;
        },
        read: writer.logs.read.bind(writer.logs),
      };
      const shipper = new LogShipper({ store, warn: (m) => warnings.push(m), flushMs: 5, retryMs: 20 });
      shipper.event('job2', '{"n":1}');
      shipper.add('job2', 'transcript:a', ['t1', 't2']);
      await waitFor(() => shipper.waiting === 0, 'the first lines sent', 30_000);
      lose = 1;
      shipper.event('job2', '{"n":2}');
      shipper.event('job2', '{"n":3}');
      await waitFor(() => shipper.waiting === 0 && lose === 0, 'the lost reply resent', 30_000);
      // A batch that never reached the store is sent again, once.
      fail = 1;
      shipper.event('job2', '{"n":4}');
      expect(await shipper.close(30_000)).toBe(0);
      const stored = await writer.logs.read('job2');
      expect(stored.map((l) => l.line)).toEqual([
        '{"n":1}',
        't1',
        't2',
        '{"n":2}',
        '{"n":3}',
        '{"landing":"elsewhere"}',
        '{"n":4}',
      ]);
      expect(stored.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(warnings.some((w) => /could not take job job2's log lines/.test(w))).toBe(true);
    });
  },
);
