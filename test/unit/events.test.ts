import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_SCHEMAS, type JobEventType } from '../../src/model/event.js';
import { appendEvent, readEvents, warmEventParsers } from '../../src/state/events.js';
import { eventsFile } from '../../src/state/paths.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir()));
afterEach(() => tmp.cleanup());

describe('event log', () => {
  it('compiles the parsers a standby warms without writing anything, and they parse as before', () => {
    const types = EVENT_SCHEMAS.map((s) => s.shape.type.value) as JobEventType[];
    expect(types.length).toBeGreaterThan(20);
    expect(() => warmEventParsers(types)).not.toThrow();
    expect(existsSync(eventsFile(tmp.path, 'warm'))).toBe(false);
    appendEvent(tmp.path, 'warm', 'stage', { from: 'implementing', to: 'testing' });
    // A legacy line (an old 'error') is still read as it was.
    appendFileSync(
      eventsFile(tmp.path, 'warm'),
      '{"ts":"2026-01-01T00:00:00Z","type":"error","message":"old"}\n',
    );
    expect(readEvents(tmp.path, 'warm').values.map((e) => e.type)).toEqual(['stage', 'warning']);
    // A bare event is still refused after the warm-up.
    appendFileSync(eventsFile(tmp.path, 'warm'), '{"ts":"2026-01-01T00:00:00Z","type":"test_end"}\n');
    expect(readEvents(tmp.path, 'warm').skipped).toHaveLength(1);
  });

  it('is empty for a job that has none', () => {
    expect(readEvents(tmp.path, 'nojob')).toEqual({ values: [], skipped: [] });
  });

  it('keeps events in order with their data', () => {
    appendEvent(tmp.path, 'j1', 'stage', { from: 'implementing', to: 'testing' });
    appendEvent(tmp.path, 'j1', 'test_end', { command: 'npm test', exit_code: 1, duration_ms: 12 });
    const evs = readEvents(tmp.path, 'j1').values;
    expect(evs.map((e) => e.type)).toEqual(['stage', 'test_end']);
    expect(evs[1]).toMatchObject({ command: 'npm test', exit_code: 1 });
    expect(Date.parse(evs[0]!.ts)).not.toBeNaN();
  });

  it('skips a torn last line instead of failing', () => {
    appendEvent(tmp.path, 'j2', 'info', { message: 'one' });
    appendFileSync(eventsFile(tmp.path, 'j2'), '{"ts":"x","type":"inf');
    expect(readEvents(tmp.path, 'j2').values).toHaveLength(1);
  });

  it('skips a line that is JSON but not an event, saying which and why, and keeps the rest', () => {
    appendEvent(tmp.path, 'j3', 'warning', { message: 'before' });
    appendFileSync(eventsFile(tmp.path, 'j3'), '{"ts":"x","type":"test_end","command":"npm test"}\n');
    appendFileSync(eventsFile(tmp.path, 'j3'), '{"ts":"x","type":"from_the_future"}\n');
    appendEvent(tmp.path, 'j3', 'warning', { message: 'after' });
    const { values, skipped } = readEvents(tmp.path, 'j3');
    expect(values.map((e) => (e.type === 'warning' ? e.message : e.type))).toEqual(['before', 'after']);
    expect(skipped.map((s) => s.n)).toEqual([2, 3]);
    expect(skipped[0]!.error).toMatch(/exit_code/);
  });

  it("reads a log written before the stream was one union as today's events", () => {
    const legacy = [
      { ts: 'a', type: 'stage', from: 'testing', to: 'reviewing', project_review: true },
      { ts: 'b', type: 'info', message: 'committed abc', commit_id: 'abc', change_id: 'I1' },
      { ts: 'c', type: 'error', message: 'boom' },
      { ts: 'd', type: 'stage', status: 'failed', reason: 'tests' },
    ];
    mkdirSync(dirname(eventsFile(tmp.path, 'j4')), { recursive: true });
    appendFileSync(eventsFile(tmp.path, 'j4'), legacy.map((e) => JSON.stringify(e) + '\n').join(''));
    expect(readEvents(tmp.path, 'j4')).toEqual({
      values: [
        { ts: 'a', type: 'stage', from: 'testing', to: 'project-review' },
        { ts: 'b', type: 'committed', commit_id: 'abc', change_id: 'I1', message: '' },
        { ts: 'c', type: 'warning', message: 'boom' },
        { ts: 'd', type: 'finished', status: 'failed', reason: 'tests' },
      ],
      skipped: [],
    });
  });

  it('refuses to write an event a reader would skip', () => {
    expect(() =>
      appendEvent(tmp.path, 'j5', 'test_end', { command: 'x' } as unknown as Parameters<
        typeof appendEvent<'test_end'>
      >[3]),
    ).toThrow();
  });
});
