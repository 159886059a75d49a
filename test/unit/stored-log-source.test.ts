// The shared store's copy of a job's log read as its files are: a stream's
// tail gives the same parsed lines as the file's tail (a garbled line skipped
// alike), and the board's whole-log record of a job whose files are gone,
// read from the store's copy, is the record read from the files.
import { appendFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJobRecord } from '../../src/dashboard/io/record.js';
import { StoredJobLog, StoredStreamTail, storedEventsAreTheRecord } from '../../src/job-log/store-source.js';
import { JobEvent } from '../../src/model/event.js';
import { openStateStore } from '../../src/state/index.js';
import { JsonLinesTail } from '../../src/state/jsonl.js';
import { eventsFile, jobDir, transcriptFile } from '../../src/state/paths.js';
import { HOSTILE, SECRET_TEXT, expectNoControl, expectNoSecret } from '../helpers/hostile.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let dir: string;
beforeEach(() => {
  tmp = tempDir();
  dir = join(tmp.path, 'incrementum');
});
afterEach(() => tmp.cleanup());

const ev = (e: object) => JSON.stringify({ ts: '2026-11-26T00:00:00.000Z', ...e });
const say = (text: string) =>
  JSON.stringify({
    t: 1,
    dir: 'in',
    message: {
      jsonrpc: '2.0',
      method: 'session/update',
      params: { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } },
    },
  });

/** Writes lines to a job's file and to the store's copy, as the runner and its shipper do. */
function both(log: StoredJobLog, path: string, stream: 'events' | string, lines: string[]): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, lines.map((l) => l + '\n').join(''));
  if (stream === 'events') log.events.push(...lines);
  else {
    const t = log.transcripts.get(stream) ?? [];
    t.push(...lines);
    log.transcripts.set(stream, t);
  }
}

describe('the store’s copy of a job’s log', () => {
  it('tails as the file does', () => {
    const log = new StoredJobLog('j1');
    const path = eventsFile(dir, 'j1');
    both(log, path, 'events', [ev({ type: 'stage', to: 'testing' }), '{"torn']);
    const file = new JsonLinesTail(path, JobEvent);
    const stored = new StoredStreamTail(log, { events: true }, JobEvent);
    expect(stored.read()).toEqual(file.read());
    expect(stored.read()).toEqual([]);
    both(log, path, 'events', [ev({ type: 'warning', message: HOSTILE }), ev({ type: 'nope' })]);
    const next = stored.read();
    expect(next).toEqual(file.read());
    expect(next.map((l) => [l.n, l.ok])).toEqual([
      [3, true],
      [4, false],
    ]);
  });

  it('gives the board the record its files give, redacted and escaped alike', () => {
    const store = openStateStore({ dir });
    const todo = store.todos.create('r', { title: 't' });
    const job0 = store.jobs.create('r', { todo_id: todo.id });
    const t = transcriptFile(dir, job0.id, 'a1');
    store.jobs.addAgentSession(job0.id, { purpose: 'implement', id: 'a1', transcript: t });
    store.jobs.finish(job0.id, 'failed', `reason ${HOSTILE}`);
    const job = store.jobs.get(job0.id)!;
    store.close();
    const log = new StoredJobLog(job.id);
    both(log, eventsFile(dir, job.id), 'events', [
      ev({ type: 'agent_start', purpose: 'implement', agent_session_id: 'a1' }),
    ]);
    both(log, t, 'a1', [say(`${HOSTILE}\n${SECRET_TEXT}`), '{"torn']);
    both(log, eventsFile(dir, job.id), 'events', [
      ev({ type: 'tests', passed: true, results: [] }),
      ev({ type: 'finished', status: 'failed', reason: 'x' }),
    ]);
    const fromFiles = readJobRecord(dir, job);
    rmSync(jobDir(dir, job.id), { recursive: true });
    expect(readJobRecord(dir, job).log.join('\n')).toContain('(no transcript at');
    const fromStore = readJobRecord(dir, job, log);
    expect(fromStore).toEqual(fromFiles);
    expectNoControl(fromStore.log.join('\n'), 'the record from the store');
    expectNoSecret(fromStore.log.join('\n'), 'the record from the store');
  });

  it('is read where the events file here is not the whole log: no file, another host’s job, or fewer lines', () => {
    const job = { id: 'j2', host: 'here' } as Parameters<typeof storedEventsAreTheRecord>[1];
    const log = new StoredJobLog('j2');
    expect(storedEventsAreTheRecord(dir, job, null, 'here')).toBe(false);
    expect(storedEventsAreTheRecord(dir, job, log, 'here')).toBe(true); // no file
    both(log, eventsFile(dir, 'j2'), 'events', [
      ev({ type: 'info', message: 'one' }),
      ev({ type: 'info', message: 'two' }),
    ]);
    expect(storedEventsAreTheRecord(dir, job, log, 'here')).toBe(false); // the file is the whole of it
    expect(storedEventsAreTheRecord(dir, job, log, 'elsewhere')).toBe(true); // the job ran on another host
    // A landing on another machine added a line to the store's copy only.
    log.events.push(ev({ type: 'info', message: 'landed on main' }));
    expect(storedEventsAreTheRecord(dir, job, log, 'here')).toBe(true);
    // And a record read from it has that line, after the rest.
    const store = openStateStore({ dir });
    const todo = store.todos.create('r', { title: 't' });
    const j = store.jobs.create('r', { todo_id: todo.id });
    store.close();
    const mine = new StoredJobLog(j.id);
    both(mine, eventsFile(dir, j.id), 'events', [ev({ type: 'info', message: 'ran here' })]);
    mine.events.push(ev({ type: 'info', message: 'landed elsewhere' }));
    const text = readJobRecord(dir, { ...j, host: 'not-this-host-at-all' }, mine).log.join('\n');
    expect(text).toContain('ran here');
    expect(text).toContain('landed elsewhere');
    expect(readJobRecord(dir, j, null).log.join('\n')).not.toContain('landed elsewhere');
  });
});
