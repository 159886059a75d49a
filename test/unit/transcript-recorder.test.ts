// The transcript recorder's cap ([agent] transcript-max-mb): a turn past it
// keeps its head and its last part, with one marker line saying what was
// dropped between them, and the file stays within the cap at every flush.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TranscriptRecorder } from '../../src/agent/transcript-recorder.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir('ii-recorder-');
afterAll(tmp.cleanup);

const update = (i: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'session/update',
    params: {
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `chunk ${i} ` } },
    },
  });

interface Line {
  type?: string;
  message?: { method?: string; params?: { update?: { content?: { text?: string } } } } | string;
  dropped?: { messages: number; bytes: number };
}
const linesOf = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
const chunkOf = (l: Line) =>
  typeof l.message === 'object' ? l.message.params?.update?.content?.text : undefined;

/** One turn: the prompt, `n` updates flushed `every` at a time (as ticks do), the answer. */
function turn(r: TranscriptRecorder, n: number, sizes: number[], every = 100): void {
  r.beginTurn();
  r.out({
    jsonrpc: '2.0',
    id: 2,
    method: 'session/prompt',
    params: { prompt: [{ type: 'text', text: 'do it' }] },
  });
  for (let i = 1; i <= n; i++) {
    r.inRaw(update(i));
    if (i % every === 0) {
      r.flush();
      sizes.push(statSync(r.path).size);
    }
  }
  r.inRaw(JSON.stringify({ jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } }));
  r.flush();
  sizes.push(statSync(r.path).size);
}

describe('TranscriptRecorder', () => {
  it.each([
    ['100 a tick', 100],
    ['all in one tick', Infinity],
  ])('keeps a flooding turn within its cap: the head, one marker, the last part (%s)', (_, every) => {
    const cap = 64 * 1024;
    const r = new TranscriptRecorder(join(tmp.path, `flood-${every}.jsonl`), cap);
    const sizes: number[] = [];
    turn(r, 20_000, sizes, every);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(cap);
    const lines = linesOf(r.path);
    // The head: the prompt and the first updates, in order.
    expect(lines[0]!.message).toMatchObject({ method: 'session/prompt' });
    expect(lines.slice(1, 4).map(chunkOf)).toEqual(['chunk 1 ', 'chunk 2 ', 'chunk 3 ']);
    // One marker, saying how many messages and bytes it stands for.
    const markers = lines.filter((l) => l.dropped);
    expect(markers).toHaveLength(1);
    const m = markers[0]!;
    expect(m.type).toBe('warning');
    expect(m.message).toMatch(
      /^[\d,]+ messages \([\d.]+ MB\) of this turn dropped here: .*transcript-max-mb/,
    );
    // Nothing lost without being counted: kept + dropped updates are all of them.
    const kept = lines.filter((l) => chunkOf(l) !== undefined).length;
    expect(kept + m.dropped!.messages).toBe(20_000);
    expect(m.dropped!.bytes).toBeGreaterThan(20_000 * 50);
    // The last part runs on from the marker to the very end of the turn.
    const at = lines.indexOf(m);
    const after = lines.slice(at + 1, -1).map(chunkOf);
    expect(after.length).toBeGreaterThan(10);
    const firstKept = Number(/chunk (\d+)/.exec(after[0]!)![1]);
    expect(after).toEqual(after.map((_, k) => `chunk ${firstKept + k} `));
    expect(after.at(-1)).toBe('chunk 20000 ');
    expect(lines.at(-1)!.message).toMatchObject({ result: { stopReason: 'end_turn' } });
  });

  it('caps each turn on its own and leaves a turn within the cap untouched', () => {
    const cap = 64 * 1024;
    const r = new TranscriptRecorder(join(tmp.path, 'turns.jsonl'), cap);
    const sizes: number[] = [];
    turn(r, 100, sizes);
    const small = readFileSync(r.path, 'utf8');
    expect(small).not.toContain('"dropped"');
    turn(r, 5_000, sizes);
    const text = readFileSync(r.path, 'utf8');
    // The first turn is still whole; the second has its own head and marker.
    expect(text.startsWith(small)).toBe(true);
    expect(statSync(r.path).size - small.length).toBeLessThanOrEqual(cap);
    expect(linesOf(r.path).filter((l) => l.dropped)).toHaveLength(1);
    turn(r, 5_000, sizes);
    expect(linesOf(r.path).filter((l) => l.dropped)).toHaveLength(2);
  });
});
