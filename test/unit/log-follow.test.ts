// ii job logs --follow's renderer (job-log/follow.ts): events as the log
// shows them, an agent's section opened by its start, and its transcript's
// lines given once final: a message still streaming is held back until
// something follows it, then given whole, redacted and escaped.
import { describe, expect, it } from 'vitest';
import { LogFollower } from '../../src/job-log/follow.js';
import type { JobEvent } from '../../src/model/event.js';
import { SECRETS } from '../helpers/hostile.js';

const chunk = (text: string) => ({
  t: 1,
  dir: 'in',
  message: {
    jsonrpc: '2.0',
    method: 'session/update',
    params: { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } },
  },
});
const end = { t: 2, dir: 'in', message: { jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } } };
const ev = (e: Record<string, unknown>) => ({ ts: '2026-11-26T00:00:00.000Z', ...e }) as JobEvent;

describe('LogFollower', () => {
  it('opens an agent’s section, holds a streaming message back until it ends, and ends with the job', () => {
    const f = new LogFollower();
    expect(f.event(ev({ type: 'stage', to: 'implementing' }))).toEqual(['→ implementing']);
    expect(f.event(ev({ type: 'agent_start', purpose: 'implement', agent_session_id: 'a1' }))).toEqual([
      '',
      '=== 1. implement · agent session a1 · 2026-11-26T00:00:00.000Z ===',
    ]);
    expect(f.transcript('a1', [chunk('Hello, '), chunk('wor')])).toEqual([]);
    const key = SECRETS[0]!;
    const lines = f.transcript('a1', [chunk(`ld\x1b[2J ${key.text}`), end]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^ {2}Hello, world\\x1b\[2J /);
    expect(lines[0]).not.toContain(key.leak);
    expect(lines[1]).toBe('  (turn ended: end_turn)');
    // Given once: nothing more until more comes.
    expect(f.transcript('a1', [])).toEqual([]);
    expect(f.finished).toBe(false);
    expect(f.event(ev({ type: 'finished', status: 'completed', reason: null }))).toEqual(['■ job completed']);
    expect(f.finished).toBe(true);
  });

  it('goes on from what the whole log printed, and gives what is held back at the end', () => {
    const f = new LogFollower([
      { id: 'a1', entries: [] },
      { id: 'a2', entries: [chunk('printed already'), end] },
    ]);
    expect(f.transcript('a2', [chunk('more '), chunk('to say')])).toEqual([]);
    expect(f.rest()).toEqual(['  more to say']);
    expect(f.event(ev({ type: 'agent_start', purpose: 'review', agent_session_id: 'a3' }))[1]).toMatch(
      /^=== 3\. review · agent session a3/,
    );
  });
});
