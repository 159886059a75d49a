// The board reads agent transcripts only for the job it shows: with 32 agents
// streaming 50 updates a second, watching and parsing every transcript kept
// the dashboard busy between keys (bench/scale.bench.js).
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { TranscriptRecorder } from '../../src/agent/transcript-recorder.js';
import { selectedJob } from '../../src/dashboard/view/board.js';
import { LIVE_DRAW_MS } from '../../src/dashboard/io/sync.js';
import { dashFixture, makeJob, type DashFixture } from '../helpers/dash-fixture.js';
import { waitFor } from '../helpers/tmp.js';

let fx: DashFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

/** Gives a job an agent session and returns a function that appends a line to its transcript. */
function withAgent(f: DashFixture, jobId: string, agentId: string): (text: string) => void {
  const rel = `jobs/${jobId}/transcripts/${agentId}.jsonl`;
  f.state.jobs.addAgentSession(jobId, { purpose: 'implement', id: agentId, transcript: rel });
  const path = join(f.state.dir, rel);
  mkdirSync(dirname(path), { recursive: true });
  return (text) => appendFileSync(path, JSON.stringify({ type: 'warning', message: text }) + '\n');
}

/** The board's first load, then watching, as the dashboard starts. */
async function openBoard(f: DashFixture): Promise<void> {
  f.sync.loadAll();
  f.sync.start();
  await f.sync.ready();
}

const pane = (f: DashFixture, id: string) => f.dash.getState().live[id] ?? [];

it('holds only the shown job’s transcript, follows its writes, and reads another’s when the cursor reaches it', async () => {
  // A long fallback poll: the transcript's own watch must carry the writes.
  fx = dashFixture({ pollMs: 60_000 });
  const a = makeJob(fx.state);
  const b = makeJob(fx.state);
  const say = { [a.id]: withAgent(fx, a.id, 'agent-a'), [b.id]: withAgent(fx, b.id, 'agent-b') };
  say[a.id]!('a says one');
  say[b.id]!('b says one');
  await openBoard(fx);
  const shown = selectedJob(fx.dash.getState())!.id;
  const other = shown === a.id ? b.id : a.id;
  const name = (id: string) => (id === a.id ? 'a' : 'b');
  expect(fx.sync.transcriptsHeld()).toBe(1);
  expect(pane(fx, shown)).toContain(`  ! ${name(shown)} says one`);

  say[shown]!(`${name(shown)} says two`);
  await waitFor(() => pane(fx!, shown).includes(`  ! ${name(shown)} says two`), 'the shown job’s new line');

  // A hidden job's transcript is not read as it grows…
  say[other]!(`${name(other)} says two`);
  fx.dash.getState().dispatch({ type: 'move', dir: 'down' });
  expect(selectedJob(fx.dash.getState())!.id).toBe(other);
  // …but all of it is there when it comes into view, and the other one is let go.
  expect(pane(fx, other)).toEqual(
    expect.arrayContaining([`  ! ${name(other)} says one`, `  ! ${name(other)} says two`]),
  );
  expect(fx.sync.transcriptsHeld()).toBe(1);
  say[other]!(`${name(other)} says three`);
  await waitFor(
    () => pane(fx!, other).includes(`  ! ${name(other)} says three`),
    'the newly shown job’s new line',
  );
});

it('follows the shown job into its next agent session’s transcript', async () => {
  fx = dashFixture({ pollMs: 60_000 });
  const a = makeJob(fx.state);
  withAgent(fx, a.id, 'first')('from the implementer');
  await openBoard(fx);
  expect(pane(fx, a.id)).toContain('  ! from the implementer');
  const say = withAgent(fx, a.id, 'second');
  say('from the reviewer');
  await waitFor(() => pane(fx!, a.id).includes('  ! from the reviewer'), 'the second session’s line');
  say('more from the reviewer');
  await waitFor(() => pane(fx!, a.id).includes('  ! more from the reviewer'), 'a later line of it');
  expect(fx.sync.transcriptsHeld()).toBe(1);
});

it('draws a streaming pane at most once per LIVE_DRAW_MS, and ends on the last line', async () => {
  // A key pressed just after a streamed frame waits for Ink's frame throttle:
  // drawing the pane on every line an agent streams made that the common case.
  fx = dashFixture({ pollMs: 60_000 });
  const a = makeJob(fx.state);
  const say = withAgent(fx, a.id, 'agent-a');
  say('line 0');
  await openBoard(fx);
  let draws = 0;
  let last = fx.dash.getState().live[a.id];
  const unsubscribe = fx.dash.subscribe((s) => {
    if (s.live[a.id] !== last) {
      last = s.live[a.id];
      draws++;
    }
  });
  const t0 = performance.now();
  for (let i = 1; i <= 50; i++) {
    say(`line ${i}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await waitFor(() => pane(fx!, a.id).includes('  ! line 50'), 'the last line');
  const elapsed = performance.now() - t0;
  unsubscribe();
  expect(draws).toBeGreaterThan(0);
  expect(draws).toBeLessThanOrEqual(Math.ceil(elapsed / LIVE_DRAW_MS) + 1);
});

it('lets the shown job’s transcript go when the job ends (only a running job has a live pane)', async () => {
  fx = dashFixture({ pollMs: 60_000 });
  const a = makeJob(fx.state);
  withAgent(fx, a.id, 'agent-a')('working');
  await openBoard(fx);
  expect(fx.sync.transcriptsHeld()).toBe(1);
  fx.state.jobs.finish(a.id, 'completed');
  await waitFor(() => fx!.dash.getState().jobs.find((j) => j.id === a.id)?.status === 'completed', 'the end');
  expect(fx.sync.transcriptsHeld()).toBe(0);
});

it('shows a capped transcript as its head, one marker saying what was dropped, and its end, nothing twice', async () => {
  // The recorder drops the middle of a flooding turn in place (the file
  // shrinks, or is rewritten past where the board had read): the pane starts
  // afresh from the file as it now is instead of running on from before.
  fx = dashFixture({ pollMs: 60_000 });
  const a = makeJob(fx.state);
  const rel = `jobs/${a.id}/transcripts/flood.jsonl`;
  fx.state.jobs.addAgentSession(a.id, { purpose: 'implement', id: 'flood', transcript: rel });
  const recorder = new TranscriptRecorder(join(fx.state.dir, rel), 64 * 1024);
  recorder.beginTurn();
  recorder.out({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { prompt: [] } });
  recorder.flush();
  await openBoard(fx);
  const chunk = (i: number) =>
    JSON.stringify({
      jsonrpc: '2.0',
      method: 'session/update',
      params: { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `c${i} ` } } },
    });
  const N = 8000;
  for (let i = 1; i <= N; i++) {
    recorder.inRaw(chunk(i));
    if (i % 200 === 0) {
      recorder.flush();
      // Paced so the board reads between some compactions and falls behind others.
      await new Promise((r) => setTimeout(r, i % 1000 === 0 ? 60 : 2));
    }
  }
  recorder.flush();
  await waitFor(() => pane(fx!, a.id).some((l) => l.endsWith(` c${N}`)), 'the last chunk');
  const lines = pane(fx, a.id);
  const markers = lines.filter((l) => l.includes('dropped here'));
  expect(markers).toHaveLength(1);
  expect(markers[0]).toMatch(/^ {2}! [\d,]+ messages \([\d.]+ MB\) of this turn dropped here/);
  const at = lines.indexOf(markers[0]!);
  expect(lines[at - 1]).toMatch(/^ {2}c1 c2 c3 /);
  expect(lines[at + 1]).toMatch(new RegExp(` c${N}$`));
  const seen = lines.join(' ').match(/\bc\d+\b/g)!;
  expect(new Set(seen).size).toBe(seen.length);
});
