import { describe, expect, it } from 'vitest';
import { frameWith, frameWithout, KEY, makeJob, dashboards } from '../helpers/dash-fixture.js';
import { shortJobId } from '../../src/model/job-id.js';

const board = dashboards();

const open = board.render;

describe('jobs board', () => {
  it('puts jobs in columns by stage and status, and marks a stale job', async () => {
    const fx = board.fixture({ dead: [999] });
    makeJob(fx.state, { title: 'implementing one' });
    makeJob(fx.state, { title: 'in review', stage: 'reviewing', changes: 1, tested: true });
    makeJob(fx.state, { title: 'done one', changes: 1, review: 'ACCEPT', finish: 'completed' });
    makeJob(fx.state, { title: 'broke', finish: 'failed' });
    makeJob(fx.state, { title: 'ghost', pid: 999 });
    const { lastFrame } = await open(fx);
    const f = await frameWith(
      lastFrame,
      'Implementing (2)',
      'Reviewing (1)',
      'Completed (1)',
      'Failed (1)',
      'STALE',
    );
    expect(f).toContain('1 stale');
    expect(f).toContain('/src/demo');
  });

  it('moves with arrows and hjkl, following the selection', async () => {
    const fx = board.fixture();
    makeJob(fx.state, { title: 'alpha' });
    makeJob(fx.state, { title: 'beta' });
    const c = makeJob(fx.state, { title: 'gamma', stage: 'testing' });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'Implementing (2)');
    const [top, second] = fx.dash.getState().jobs.filter((j) => j.stage === 'implementing');
    const at = (id: string) => frameWith(lastFrame, `live: ${shortJobId(id)}`);
    await at(top!.id);
    stdin.write('j');
    await at(second!.id);
    stdin.write('k');
    await at(top!.id);
    stdin.write(KEY.down);
    await at(second!.id);
    stdin.write(KEY.up);
    await at(top!.id);
    stdin.write(KEY.right);
    await at(c.id);
    stdin.write('h');
    await at(top!.id);
    stdin.write('L');
    await at(c.id);
    stdin.write(KEY.left);
    await at(top!.id);
  });

  it('drills job → changes → iterations → detail with enter, and back with esc', async () => {
    const fx = board.fixture();
    const job = makeJob(fx.state, {
      title: 'drill me',
      changes: 2,
      iterations: 2,
      tested: true,
      review: 'ACCEPT',
    });
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'drill me');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, `job ${job.id} · drill me`, 'Committed (2)', '#2 I00000001', '· 2 changes ·');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'change 1 (', 'Rejected (1)', 'Accepted (1)', '· 2 iterations ·');
    stdin.write(KEY.enter);
    const f = await frameWith(
      lastFrame,
      'iteration 1',
      'draft message:',
      'review: REQUEST_CHANGES',
      'please fix',
    );
    expect(f).toContain('src/f0.ts');
    stdin.write(KEY.esc);
    await frameWith(lastFrame, 'Rejected (1)');
    stdin.write(KEY.esc);
    await frameWith(lastFrame, 'Committed (2)');
    stdin.write(KEY.esc);
    await frameWith(lastFrame, 'Implementing (1)', 'live:');
  });

  it('keeps the selection on its card when a new job appears above it', async () => {
    const fx = board.fixture();
    const seen = makeJob(fx.state, { title: 'the one I look at' });
    const { lastFrame } = await open(fx);
    await frameWith(lastFrame, `live: ${shortJobId(seen.id)}`);
    // Newest first: the newcomer takes the top row of the same column.
    const newcomer = makeJob(fx.state, { title: 'newcomer' });
    fx.sync.refreshJobs();
    await frameWith(lastFrame, 'Implementing (2)', 'newcomer', shortJobId(newcomer.id));
    expect(lastFrame()).toContain(`live: ${shortJobId(seen.id)}`);
    // And it moves on with the card when that job changes column.
    fx.state.jobs.setStage(seen.id, 'testing');
    fx.sync.refreshJobs();
    await frameWith(lastFrame, 'Testing (1)', 'Implementing (1)');
    expect(lastFrame()).toContain(`live: ${shortJobId(seen.id)}`);
  });

  it('q quits', async () => {
    const fx = board.fixture();
    const { lastFrame, stdin } = await open(fx);
    await frameWith(lastFrame, 'Jobs');
    stdin.write('q');
    await waitUntil(() => fx.quits === 1);
  });
});

async function waitUntil(cond: () => boolean) {
  const { waitFor } = await import('../helpers/tmp.js');
  await waitFor(() => cond(), 'condition', 5000, 10);
}

void frameWithout;
