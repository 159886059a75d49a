// The board lists jobs as cards (model/job-card.ts), read without their
// commits, and reads the whole record of the job it shows: the cards must say
// what the whole jobs say, and the changes and commits boards, the detail and
// the keys must get whole records.
import { afterEach, expect, it } from 'vitest';
import { boardColumns, jobCard, selectedJob, shownJobId } from '../../src/dashboard/view/board.js';
import { isWholeJob, toJobCard } from '../../src/model/job-card.js';
import { dashFixture, makeJob, REPO, type DashFixture } from '../helpers/dash-fixture.js';

let fx: DashFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

/** Jobs of every kind a card tells apart. */
function seed(f: DashFixture) {
  const s = f.state;
  const jobs = [
    makeJob(s, { changes: 2, iterations: 3, tested: true, review: 'ACCEPT', finish: 'completed' }),
    makeJob(s, { finish: 'completed' }),
    makeJob(s, { changes: 1, iterations: 1, finish: 'failed' }),
    makeJob(s, { changes: 1, iterations: 2, finish: 'abandoned' }),
    makeJob(s, { changes: 1, iterations: 0 }),
    makeJob(s, { changes: 3, iterations: 2, stage: 'reviewing' }),
    makeJob(s, {}),
  ];
  s.jobs.addUsage(jobs[0]!.id, { input_tokens: 10, output_tokens: 5, cost: 0.25 });
  s.jobs.addAgentSession(jobs[5]!.id, { purpose: 'implement', id: 'sess-1', transcript: 'x.jsonl' });
  return jobs.map((j) => s.jobs.get(j.id)!);
}

it('lists every job as a card that says what the whole job says, without its commits', () => {
  fx = dashFixture();
  const whole = seed(fx);
  const cards = fx.state.jobs.listCards(REPO);
  expect(cards.map((c) => c.id).sort()).toEqual(whole.map((j) => j.id).sort());
  for (const card of cards) {
    const job = whole.find((j) => j.id === card.id)!;
    // What the store reads is the card made from the whole record.
    expect(card).toEqual(toJobCard(job));
    expect('changes' in card).toBe(false);
    expect(card.iterations).toEqual(job.changes.map((c) => c.commits.length));
    expect(jobCard(card, 'title', false)).toEqual(jobCard(job, 'title', false));
    expect(jobCard(card, 'title', true)).toEqual(jobCard(job, 'title', true));
  }
  // Newest first, as list() orders them.
  expect(cards.map((c) => c.id)).toEqual(fx.state.jobs.list(REPO).map((j) => j.id));
});

it('reads the whole record of the job it shows, and drills into its changes and commits', async () => {
  fx = dashFixture();
  seed(fx);
  fx.sync.loadAll();
  fx.sync.start();
  await fx.sync.ready();
  const d = fx.dash;
  expect(d.getState().jobs.every((j) => !isWholeJob(j))).toBe(true);
  // Whichever card the cursor is on, the keys act on its whole record.
  const seen = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const id = shownJobId(d.getState());
    if (id) {
      seen.add(id);
      const job = selectedJob(d.getState());
      expect(job?.id).toBe(id);
      expect(job && isWholeJob(job)).toBe(true);
      expect(job).toEqual(fx.state.jobs.get(id));
    }
    d.getState().dispatch({ type: 'move', dir: i < 6 ? 'down' : 'right' });
  }
  expect(seen.size).toBeGreaterThan(2);
  // Drilling into the job with two changes of three commits shows them.
  const many = fx.state.jobs.list(REPO).find((j) => j.changes.length === 2)!;
  d.getState().dispatch({ type: 'selectJob', jobId: many.id });
  expect(shownJobId(d.getState())).toBe(many.id);
  d.getState().dispatch({ type: 'drill' });
  expect(d.getState().nav.level).toBe('changes');
  const changes = boardColumns(d.getState()).flatMap((c) => c.cards);
  expect(changes.map((c) => c.title)).toHaveLength(2);
  d.getState().dispatch({ type: 'drill' });
  expect(d.getState().nav.level).toBe('commits');
  expect(boardColumns(d.getState()).flatMap((c) => c.cards)).toHaveLength(3);
});

it('keeps a job written while the board runs whole, with what was written', async () => {
  fx = dashFixture({ pollMs: 60_000 });
  const [, , , , open] = seed(fx);
  fx.sync.loadAll();
  fx.state.jobs.appendCommit(open!.id, { commit_id: 'c-new'.padEnd(40, '0'), draft_message: 'feat: more' });
  fx.sync.refreshJobs();
  const listed = fx.dash.getState().jobs.find((j) => j.id === open!.id)!;
  expect(isWholeJob(listed)).toBe(true);
  expect(isWholeJob(listed) && listed.changes[0]!.commits.map((c) => c.draft_message)).toEqual([
    'feat: more',
  ]);
});
