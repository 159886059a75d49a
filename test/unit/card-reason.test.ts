// The pane under the jobs board (src/dashboard/view/card-reason.ts): the
// selected card's whole reason, the first line whole at any width.
import { afterAll, expect, it } from 'vitest';
import { cardReason, reasonPaneHeight, reasonRows } from '../../src/dashboard/view/card-reason.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { openStateStore } from '../../src/state/index.js';
import { cellWidth, wordWrap } from '../../src/text/cells.js';
import { makeJob, REPO } from '../helpers/dash-fixture.js';
import { tempDir } from '../helpers/tmp.js';
import { shortJobId } from '../../src/model/job-id.js';

const tmp = tempDir('ii-reason-');
const state = openStateStore({ dir: tmp.path });
afterAll(() => {
  state.close();
  tmp.cleanup();
});

const FIRST =
  'the implement agent failed: the agent (scripted) exited with code 7 during its turn; its last output on stderr:';

function boardOf(jobId: string) {
  const job = state.jobs.get(jobId)!;
  const dash = createDashboardStore({ repo: REPO, repoLabel: REPO, color: false, jobs: [job] });
  return dash.getState();
}

it("a failed job's reason: every line, the first non-empty one first, escaped", () => {
  const job = makeJob(state, { title: 'fails', finish: 'failed' });
  state.jobs.finish(job.id, 'failed', `\n${FIRST}\nscripted agent: \x1b[31mcrashing\x1b[0m (exit 7)\n`);
  const text = cardReason(boardOf(job.id))!;
  const [title, ...lines] = text.split('\n');
  expect(title).toContain(`job ${shortJobId(job.id)} failed`);
  expect(lines).toEqual([FIRST, 'scripted agent: \\x1b[31mcrashing\\x1b[0m (exit 7)']);
});

it("a refused landing's reason, and none for a job that has nothing to say", () => {
  const job = makeJob(state, { title: 'refused', finish: 'completed', changes: 1 });
  expect(cardReason(boardOf(job.id))).toBeNull();
  state.jobs.setLanding(job.id, {
    state: 'refused',
    onto: 'main',
    at: new Date().toISOString(),
    step: 'main is checked out with uncommitted changes in /src/demo: commit or stash them, then land again',
    pid: null,
    host: null,
  });
  expect(cardReason(boardOf(job.id))).toContain(
    'not landed: main is checked out with uncommitted changes in /src/demo: commit or stash them, then land again',
  );
});

it('the first line is whole at any width: word-wrapped by cells, and the pane keeps its rows', () => {
  const text = `── job 1234567 failed · t\n${FIRST}\n日本語のテキスト 🎉 ${'日本語'.repeat(10)}`;
  for (const width of [20, 40, 80, 160]) {
    const { rows, first } = reasonRows(text, width);
    for (const r of rows) expect(cellWidth(r)).toBeLessThanOrEqual(width);
    expect(rows.slice(0, first).join(' ')).toBe(FIRST);
    // A body of 21 rows (80×24) or more leaves the pane room for its title and the first line.
    for (const height of [21, 42])
      expect(reasonPaneHeight(text, width, height)).toBeGreaterThanOrEqual(1 + first);
  }
  expect(wordWrap('a verylongword b', 6)).toEqual(['a', 'verylo', 'ngword', 'b']);
});
