// A job whose iteration added a 150 MB text file and a 20 MB binary one:
// `ii job diff` shows the first lines, says what it left out and how to see
// it, summarises the binary file, and its peak memory stays bounded (the
// whole diff was once read into memory: 1.5 GB RSS); the dashboard's diff
// view gets the same capped diff, not "maxBuffer length exceeded".
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActions } from '../../src/dashboard/io/actions.js';
import { diffKey } from '../../src/dashboard/view/state.js';
import { createDashboardStore } from '../../src/dashboard/view/store.js';
import { openStateStore, repoSlug } from '../../src/state/index.js';
import { II } from '../helpers/cli.js';
import { JobFixture, jobIdFrom } from '../helpers/job.js';
import { asyncStore } from '../../src/state/sync-adapter.js';

let fx: JobFixture;
let jobId: string;
const LINE = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor';
const BYTES = 150_000_000;
/** Lines of big.txt: whole ones, and a last cut short by head -c. */
const LINES = Math.ceil(BYTES / (LINE.length + 1));

beforeAll(() => {
  fx = new JobFixture('ii-hugediff-');
  fx.setup();
  const s = fx.scenario('huge', {
    implement: [
      {
        actions: [
          {
            type: 'shell',
            command: `yes '${LINE}' | head -c ${BYTES} > big.txt && head -c 20000000 /dev/zero > blob.bin && echo hi > small.txt`,
          },
          { type: 'commit_message', text: 'Add huge files' },
        ],
      },
    ],
  });
  const r = fx.run(['job', 'do', '--title', 'huge files'], s);
  expect(r.code, r.stderr).toBe(0);
  jobId = jobIdFrom(r.stderr);
}, 300_000);
afterAll(() => fx.tmp.cleanup());

describe('the diff of a huge iteration', () => {
  it('ii job diff: capped, says what was left out, binary summarised, peak RSS under 300 MB', () => {
    // Reports the process's own peak RSS (VmHWM) as it exits: a resource bound, not a timing.
    const hwm = join(fx.tmp.path, 'hwm.cjs');
    writeFileSync(
      hwm,
      "process.on('exit', () => process.stderr.write('VmHWM ' + /VmHWM:\\s*(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1] + '\\n'));\n",
    );
    const r = spawnSync(process.execPath, ['-r', hwm, II, 'job', 'diff', jobId], {
      cwd: fx.repo,
      env: { ...process.env, NO_COLOR: '1', ...fx.env },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const peakKb = Number(/VmHWM (\d+)/.exec(r.stderr)?.[1]);
    expect(peakKb).toBeGreaterThan(0);
    expect(peakKb).toBeLessThan(300 * 1024);
    expect(r.stdout).toContain('+hi');
    const out = r.stdout.split('\n');
    const hunk = out.indexOf(`@@ -0,0 +1,${LINES} @@`);
    expect(hunk).toBeGreaterThan(0);
    const shownOfBig = out.slice(hunk + 1).findIndex((l) => l !== `+${LINE}`);
    expect(shownOfBig).toBeGreaterThan(100);
    expect(out[hunk + 1 + shownOfBig]).toMatch(
      new RegExp(
        `^… ${(LINES - shownOfBig).toLocaleString('en-US')} more lines of big\\.txt not shown \\(git diff [0-9a-f]{40} [0-9a-f]{40} -- big\\.txt for all of it\\)$`,
      ),
    );
    expect(r.stdout).toContain('diff --git a/blob.bin b/blob.bin\nbinary file, 20 MB (added)');
    expect(r.stdout.length).toBeLessThan(1_000_000);
  });

  it('the dashboard’s diff view gets the capped diff, not an error', async () => {
    const state = openStateStore({ dir: join(fx.tmp.path, 'state', 'incrementum') });
    try {
      const dash = createDashboardStore({ repo: repoSlug(fx.repo), repoLabel: fx.repo });
      const actions = createActions({ state: asyncStore(state), dash, repoRoot: fx.repo, quit: () => {} });
      await actions.loadDiff(jobId, 1, 1);
      const d = dash.getState().diffs[diffKey(jobId, 1, 1)];
      expect(d?.error).toBeNull();
      expect(d?.loaded?.diff).toContain('more lines of big.txt not shown');
      expect(d?.loaded?.diff).toContain('binary file, 20 MB (added)');
    } finally {
      state.close();
    }
  });
});
