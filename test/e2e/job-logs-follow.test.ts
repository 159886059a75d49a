// ii job logs --follow on this machine (no shared store): the whole log of a
// running job, then its new lines as they are appended to its files, each
// once, until the job ends.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { II } from '../helpers/cli.js';
import { jobIdFrom, JobFixture, verdict, write } from '../helpers/job.js';
import { waitFor } from '../helpers/tmp.js';

let fx: JobFixture;
let ranId = '';
beforeAll(() => {
  fx = new JobFixture('ii-follow-');
  fx.setup();
});
afterAll(() => fx.cleanup());

describe('ii job logs --follow', () => {
  it('prints a running job’s log, then each new line once, until the job ends', async () => {
    const s = fx.scenario('slow', {
      implement: [
        {
          actions: [
            { type: 'message', text: 'before the wait' },
            write('b.txt', 'b\n'),
            { type: 'delay', ms: 6000 },
            { type: 'message', text: 'after the wait' },
          ],
        },
        { actions: [] },
      ],
      review: [verdict('ACCEPT', 'good')],
      'project-review': [verdict('ACCEPT', 'done')],
      'commit-message': [{ actions: [{ type: 'commit_message', text: 'feat: slow' }] }],
    });
    const run = fx.spawn(['job', 'do', '--title', 'slow job'], s);
    try {
      const id = await waitFor(() => jobIdFrom(run.stderr()) || null, 'the job id', 60_000);
      ranId = id;
      const transcript = await waitFor(
        () => {
          const job = fx.show(id);
          const t = job.agent_sessions[0]?.transcript;
          return t && existsSync(t) && readFileSync(t, 'utf8').includes('before the wait') ? t : null;
        },
        'the first message in the transcript',
        60_000,
      );
      const follow = spawn(process.execPath, [II, 'job', 'logs', id, '-f'], {
        cwd: fx.repo,
        env: { ...process.env, NO_COLOR: '1', ...fx.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      follow.stdout.on('data', (d: Buffer) => (out += d.toString()));
      follow.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const closed = new Promise<number | null>((res) => follow.on('close', res));
      await waitFor(() => out.includes('before the wait'), 'the log so far', 60_000);
      // Still waiting: what comes next can only come through the follow.
      expect(readFileSync(transcript, 'utf8')).not.toContain('after the wait');
      expect(await closed, err).toBe(0);
      expect(await run.exit).toBe(0);
      expect(out.split('\n').filter((l) => l === '  after the wait')).toHaveLength(1);
      expect(out.split('\n').filter((l) => l === '  before the wait')).toHaveLength(1);
      expect(out).toContain('review: ACCEPT — good');
      expect(out.trimEnd().split('\n').at(-1)).toBe('■ job completed');
    } finally {
      run.child.kill('SIGKILL');
    }
  });

  it('prints an ended job’s log as without --follow, and ends', () => {
    const id = ranId;
    expect(id).not.toBe('');
    const done = fx.run(['job', 'logs', id, '--follow']);
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(fx.run(['job', 'logs', id]).stdout);
  });
});
