// The permission-request store and answerAsk: a job shows its open request
// as `asking`, an answer closes it once (the first ending wins) and adds its
// wait to the job's total.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { answerAsk } from '../../src/job/answer.js';
import { isWaiting } from '../../src/model/permission-ask.js';
import type { StateStore } from '../../src/state/api.js';
import { openStateStore } from '../../src/state/index.js';
import { tempDir } from '../helpers/tmp.js';
import { asyncStore } from '../../src/state/sync-adapter.js';
import { ASK } from '../helpers/permission-ask.js';

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

describe('permission requests', () => {
  it('an open request is the job asking; an answer closes it, records its wait and the job total', async () => {
    const job = store.jobs.create('r', { todo_id: 't' });
    expect(store.jobs.get(job.id)!.asking).toBeNull();
    const v0 = store.jobs.version();
    const ask = store.asks.open(job.id, ASK);
    expect(ask).toMatchObject({ job_id: job.id, outcome: null, answered_at: null, command: 'npm test' });
    const waiting = store.jobs.get(job.id)!;
    expect(waiting.asking?.id).toBe(ask.id);
    expect(isWaiting(waiting)).toBe(true);
    // The board reloads only changed jobs: opening one is a change of the job.
    expect(store.jobs.listChangedAfter(v0, 'r').map((j) => j.id)).toEqual([job.id]);
    expect(JSON.parse(store.jobs.listJson('r'))[0].asking.id).toBe(ask.id);

    const closed = await answerAsk({
      store: asyncStore(store),
      jobId: job.id,
      answer: 'reject',
      note: '  use npm run test:unit  ',
    });
    expect(closed).toMatchObject({ outcome: 'reject', note: 'use npm run test:unit' });
    expect(closed.waited_ms).toBeGreaterThanOrEqual(0);
    const after = store.jobs.get(job.id)!;
    expect(after.asking).toBeNull();
    expect(after.waited_ms).toBe(closed.waited_ms);
    // The first ending wins: a timeout after the answer changes nothing.
    expect(store.asks.close(ask.id, 'timeout')).toBeNull();
    expect(store.asks.get(ask.id)!.outcome).toBe('reject');
    expect(store.asks.list(job.id)).toHaveLength(1);
  });

  it('answerAsk with the request the person saw answers that one only: one asked again after a timeout is left open', async () => {
    const job = store.jobs.create('r', { todo_id: 't' });
    const seen = store.asks.open(job.id, ASK);
    store.asks.close(seen.id, 'timeout', null);
    const again = store.asks.open(job.id, { ...ASK, command: 'git reset --hard HEAD~3', title: 'reset' });
    await expect(
      answerAsk({ store: asyncStore(store), jobId: job.id, answer: 'allow-always', askId: seen.id }),
    ).rejects.toThrow(/was timeout already: nothing sent/);
    expect(store.asks.get(again.id)!.outcome).toBeNull();
    await expect(
      answerAsk({ store: asyncStore(store), jobId: job.id, answer: 'allow', askId: 999 }),
    ).rejects.toThrow(/has no request 999/);
    expect(
      (await answerAsk({ store: asyncStore(store), jobId: job.id, answer: 'reject', askId: again.id }))
        .outcome,
    ).toBe('reject');
  });

  it('answerAsk says what to do when there is nothing to answer', async () => {
    const job = store.jobs.create('r', { todo_id: 't' });
    await expect(answerAsk({ store: asyncStore(store), jobId: job.id, answer: 'allow' })).rejects.toThrow(
      /not waiting for an answer/,
    );
    store.asks.open(job.id, ASK);
    store.jobs.finish(job.id, 'failed', 'x');
    await expect(answerAsk({ store: asyncStore(store), jobId: job.id, answer: 'allow' })).rejects.toThrow(
      UserError,
    );
    await expect(answerAsk({ store: asyncStore(store), jobId: job.id, answer: 'allow' })).rejects.toThrow(
      /is failed/,
    );
    await expect(answerAsk({ store: asyncStore(store), jobId: 'nope', answer: 'allow' })).rejects.toThrow(
      /no job nope/,
    );
  });

  it("a job's end cancels a request left open (a runner that died while it waited), adding its wait", () => {
    const job = store.jobs.create('r', { todo_id: 't' });
    const ask = store.asks.open(job.id, ASK);
    const t0 = Date.now();
    while (Date.now() < t0 + 2); // a wait of at least a millisecond
    const ended = store.jobs.finish(job.id, 'failed', 'its runner was gone');
    expect(ended.asking).toBeNull();
    expect(store.asks.get(ask.id)).toMatchObject({ outcome: 'cancelled' });
    expect(ended.waited_ms).toBe(store.asks.get(ask.id)!.waited_ms);
    expect(ended.waited_ms).toBeGreaterThan(0);
  });
});
