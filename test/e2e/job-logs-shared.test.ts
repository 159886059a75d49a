// A job's log in the shared store: a job run with II_DATABASE_URL sends its
// events and agent transcripts to PostgreSQL as it goes (state/log-shipper.ts),
// so `ii job logs` on a machine without its files (here: the job's files
// deleted from the state dir after it ran) prints what it printed where they
// were, the agent's hostile text redacted and escaped exactly as from a file.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ii } from '../helpers/cli.js';
import { jobIdFrom, JobFixture, verdict, write } from '../helpers/job.js';
import { expectNoControl, expectNoSecret, HOSTILE, SECRET_TEXT, SHOWN_CLEAR } from '../helpers/hostile.js';
import { dropDatabase, freshDatabase, pgServer, pgWhyNot, socketUrl } from '../helpers/pg.js';

const server = pgServer();
const SAY = `${HOSTILE}\n${SECRET_TEXT}`;

describe.skipIf(!server)(
  `a job's log in the shared store${server ? '' : ` (skipped: ${pgWhyNot()})`}`,
  () => {
    let fx: JobFixture;
    let db = '';
    let url = '';
    let jobId = '';
    let jobDo = { code: 0, stdout: '', stderr: '' };
    const here: Record<string, { code: number; stdout: string; stderr: string }> = {};
    const LOGS = {
      text: ['job', 'logs'],
      json: ['job', 'logs', '--json'],
      tests: ['job', 'logs', '--tests'],
    };
    const logs = (k: keyof typeof LOGS) => fx.run([...LOGS[k].slice(0, 2), jobId, ...LOGS[k].slice(2)]);

    beforeAll(async () => {
      db = await freshDatabase(server!);
      url = socketUrl(server!, db);
      fx = new JobFixture('ii-shared-logs-');
      fx.setup(['test -f README.md', 'echo "tests say $(cat a.txt)"']);
      Object.assign(fx.env, { II_DATABASE_URL: url, II_LOG_SHIP_STATS: '1' });
      const s = fx.scenario('shared', {
        implement: [
          {
            actions: [
              { type: 'thought', text: 'thinking it over' },
              { type: 'message', text: SAY },
              write('a.txt', 'one\n'),
              { type: 'commit_message', text: `feat: ${HOSTILE}` },
            ],
          },
          { actions: [write('a.txt', 'two\n'), { type: 'message', text: 'second pass' }] },
          { actions: [] },
        ],
        review: [verdict('REQUEST_CHANGES', SAY), verdict('ACCEPT', 'fine now')],
        'project-review': [verdict('ACCEPT', 'done')],
        'commit-message': [{ actions: [{ type: 'commit_message', text: 'final: shared logs' }] }],
      });
      jobDo = fx.run(['job', 'do', '--title', 'shared logs'], s);
      jobId = jobIdFrom(jobDo.stderr);
      for (const k of Object.keys(LOGS) as (keyof typeof LOGS)[]) here[k] = logs(k);
    });
    afterAll(async () => {
      fx?.cleanup();
      if (db) await dropDatabase(server!, db);
    });

    it('the job ran, and sent its log to the store in batches', async () => {
      expect(jobDo.code, jobDo.stderr).toBe(0);
      expect(fx.show(jobId).status).toBe('completed');
      const stats = /log shipping: (\d+) batches, (\d+) lines/.exec(jobDo.stderr);
      expect(stats, jobDo.stderr).not.toBeNull();
      const [batches, lines] = [Number(stats![1]), Number(stats![2])];
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const r = await c.query(
          'SELECT count(*)::int AS n, max(seq)::int AS last FROM job_logs WHERE job_id = $1',
          [jobId],
        );
        expect(r.rows[0]).toEqual({ n: lines, last: lines });
      } finally {
        await c.end();
      }
      // Batched: far fewer writes than lines.
      expect(batches).toBeLessThan(lines / 2);
      expect(jobDo.stderr).not.toMatch(/warning: .*shared store/);
    });

    it('ii job logs without the job’s files prints what it printed with them, from the store', () => {
      expect(here.text!.code, here.text!.stderr).toBe(0);
      expect(here.text!.stdout).toContain('  second pass');
      expect(here.text!.stdout).toContain(`review: REQUEST_CHANGES — hostile ${SHOWN_CLEAR}`);
      const stateDir = join(fx.env.XDG_STATE_HOME!, 'incrementum');
      const jobFiles = join(stateDir, 'jobs', jobId);
      expect(existsSync(jobFiles)).toBe(true);
      rmSync(jobFiles, { recursive: true });
      for (const k of Object.keys(LOGS) as (keyof typeof LOGS)[]) {
        const there = logs(k);
        expect(there.code, there.stderr).toBe(0);
        expect(there.stdout, k).toBe(here[k]!.stdout);
        expect(there.stderr, k).toBe(here[k]!.stderr);
        expectNoControl(there.stdout, `ii job logs (${k}) from the store`);
        expectNoSecret(there.stdout, `ii job logs (${k}) from the store`);
      }
      // What the job printed as it ran is in the log read from the store.
      const fromStore = logs('text').stdout;
      for (const l of jobDo.stderr
        .split('\n')
        .filter((x) => /^\s+(review|project review|tests passed|iteration)/.test(x)))
        expect(fromStore).toContain(l.trim());
      // Without the store the same command has nothing to show: the lines above came from it.
      const alone = ii(['job', 'logs', jobId], { cwd: fx.repo, env: { ...fx.env, II_DATABASE_URL: '' } });
      expect(alone.stdout).toContain('(no transcript at');
      expect(alone.stdout).not.toContain('second pass');
    });
  },
);
