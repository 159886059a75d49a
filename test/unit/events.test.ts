import { appendFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendEvent, readEvents } from '../../src/state/events.js';
import { eventsFile } from '../../src/state/paths.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir()));
afterEach(() => tmp.cleanup());

describe('event log', () => {
  it('is empty for a job that has none', () => {
    expect(readEvents(tmp.path, 'nojob')).toEqual([]);
  });

  it('keeps events in order with their data', () => {
    appendEvent(tmp.path, 'j1', 'stage', { from: 'implementing', to: 'testing' });
    appendEvent(tmp.path, 'j1', 'test_end', { command: 'npm test', exit_code: 1, duration_ms: 12 });
    const evs = readEvents(tmp.path, 'j1');
    expect(evs.map((e) => e.type)).toEqual(['stage', 'test_end']);
    expect(evs[1]).toMatchObject({ command: 'npm test', exit_code: 1 });
    expect(Date.parse(evs[0]!.ts)).not.toBeNaN();
  });

  it('skips a torn last line instead of failing', () => {
    appendEvent(tmp.path, 'j2', 'info', { message: 'one' });
    appendFileSync(eventsFile(tmp.path, 'j2'), '{"ts":"x","type":"inf');
    expect(readEvents(tmp.path, 'j2')).toHaveLength(1);
  });
});
