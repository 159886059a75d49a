// A flooding agent against [agent] transcript-max-mb, end to end: the built
// `ii job do` with the real scripted agent sending 30,000 session/update
// notifications in one turn under a 0.5 MB cap. The turn's transcript keeps
// its head and its end with one marker line between them, and `ii job logs`
// and the board's log view (`l`) show that marker where the gap is.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJobRecord } from '../../src/dashboard/io/record.js';
import { openStateStore } from '../../src/state/index.js';
import { JobFixture, jobIdFrom } from '../helpers/job.js';

let f: JobFixture;
beforeEach(() => (f = new JobFixture('ii-tcap-')));
afterEach(() => f.cleanup());

const CAP = 0.5 * 2 ** 20;
const FLOOD = 30_000;
const MARKER =
  /^ {2}! ([\d,]+) messages \(([\d.]+) MB\) of this turn dropped here: its transcript passed \[agent\] transcript-max-mb \(0\.50 MB\)/;

interface Entry {
  dir?: string;
  type?: string;
  message?: { method?: string; params?: { update?: { content?: { text?: string } } } } | string;
  dropped?: { messages: number; bytes: number };
}

describe('[agent] transcript-max-mb', () => {
  it('keeps a flooding turn within the cap: its head, one marker saying what was dropped, its end', () => {
    f.setup(['true'], {
      agent: 'preset = "scripted"\ntranscript-max-mb = 0.5\n',
      job: 'baseline-tests = false\n',
    });
    const s = f.scenario('flood', {
      implement: [
        {
          actions: [
            { type: 'flood', count: FLOOD },
            { type: 'write', path: 'a.txt', content: 'a\n' },
          ],
        },
      ],
    });
    const r = f.run(['job', 'do', '--title', 'flood'], s);
    expect(r.stderr).toContain('completed');
    const id = jobIdFrom(r.stderr);
    const stateDir = join(f.tmp.path, 'state', 'incrementum');
    const job = f.show(id);
    const implement = job.agent_sessions.find((a) => a.purpose === 'implement')!;
    const path = implement.transcript.startsWith('/')
      ? implement.transcript
      : join(stateDir, implement.transcript);

    // The file: the handshake before the turn, then the turn within the cap.
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n').filter((l) => l.trim());
    const entries = lines.map((l) => JSON.parse(l) as Entry);
    const prompt = entries.findIndex(
      (e) => typeof e.message === 'object' && e.message.method === 'session/prompt',
    );
    expect(prompt).toBeGreaterThan(0);
    const handshake = lines.slice(0, prompt).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    expect(statSync(path).size - handshake).toBeLessThanOrEqual(CAP);
    const chunks = entries.map((e) =>
      typeof e.message === 'object' ? e.message.params?.update?.content?.text : undefined,
    );
    expect(chunks.slice(prompt + 1, prompt + 4)).toEqual(['flood 1 ', 'flood 2 ', 'flood 3 ']);
    expect(chunks).toContain(`flood ${FLOOD} `);
    const markers = entries.filter((e) => e.dropped);
    expect(markers).toHaveLength(1);
    const dropped = markers[0]!.dropped!;
    // Every update is either kept or counted as dropped.
    expect(chunks.filter((c) => c?.startsWith('flood ')).length + dropped.messages).toBe(FLOOD);

    // `ii job logs`: the head's text, the marker, then the end's text, in the implement section.
    const logs = f.run(['job', 'logs', id]);
    expect(logs.code).toBe(0);
    const out = logs.stdout.split('\n');
    const m = out.filter((l) => MARKER.test(l));
    expect(m).toHaveLength(1);
    expect(MARKER.exec(m[0]!)![1]).toBe(dropped.messages.toLocaleString('en'));
    const at = out.indexOf(m[0]!);
    expect(out[at - 1]).toMatch(/^ {2}flood 1 flood 2 flood 3 /);
    expect(out[at + 1]).toMatch(new RegExp(`flood ${FLOOD}$`));
    expect(out.slice(0, at).some((l) => l.includes('=== 1. implement'))).toBe(true);

    // The board's log view (`l`) reads the same lines.
    const store = openStateStore({ dir: stateDir });
    try {
      const log = readJobRecord(stateDir, store.jobs.get(id)!).log;
      expect(log.filter((l) => MARKER.test(l))).toEqual(m);
    } finally {
      store.close();
    }
  });
});
