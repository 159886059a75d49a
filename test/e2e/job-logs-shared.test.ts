// A job's log in the shared store: a job run with II_DATABASE_URL sends its
// events and agent transcripts to PostgreSQL as it goes (state/log-shipper.ts),
// so `ii job logs` on a machine without its files (here: the job's files
// deleted from the state dir after it ran) prints what it printed where they
// were, the agent's hostile text redacted and escaped exactly as from a file.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { II, ii } from '../helpers/cli.js';
import { jobIdFrom, JobFixture, verdict, write } from '../helpers/job.js';
import { expectNoControl, expectNoSecret, HOSTILE, SECRET_TEXT, SHOWN_CLEAR } from '../helpers/hostile.js';
import { dropDatabase, freshDatabase, pgServer, pgWhyNot, socketUrl } from '../helpers/pg.js';
import { waitFor } from '../helpers/tmp.js';

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
      // Without the store this machine knows nothing of the job (its record,
      // too, is in PostgreSQL): the lines above came from the store.
      const alone = ii(['job', 'logs', jobId], { cwd: fx.repo, env: { ...fx.env, II_DATABASE_URL: '' } });
      expect(alone.code).not.toBe(0);
      expect(alone.stderr).toMatch(/no job/i);
      expect(alone.stdout).not.toContain('second pass');
    });

    it('a landing on a machine without the job’s files adds its lines to the store’s log, and ii job logs shows the whole of it', async () => {
      // Run after the test above: the job's files are gone, as on machine B.
      const stateDir = join(fx.env.XDG_STATE_HOME!, 'incrementum');
      expect(existsSync(join(stateDir, 'jobs', jobId, 'events.jsonl'))).toBe(false);
      const before = logs('text');
      expect(before.code, before.stderr).toBe(0);
      // This clone has no remote: the landing stays in it (the user's config, so the clone stays clean).
      const conf = join(fx.env.XDG_CONFIG_HOME!, 'incrementum');
      mkdirSync(conf, { recursive: true });
      writeFileSync(join(conf, 'config.toml'), '[land]\npush = false\n', { mode: 0o600 });
      const land = fx.run(['job', 'land', jobId, '--no-test']);
      expect(land.code, land.stderr).toBe(0);
      // The landing wrote its events here (a file of one or two lines) and sent them to the store.
      expect(existsSync(join(stateDir, 'jobs', jobId, 'events.jsonl'))).toBe(true);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const r = await c.query(
          "SELECT count(*)::int AS n FROM job_logs WHERE job_id = $1 AND stream = 'events' AND line LIKE '%landed on%'",
          [jobId],
        );
        expect(r.rows[0].n).toBe(1);
      } finally {
        await c.end();
      }
      // Every line it printed before, and the landing after them: the store's log, not the short file here.
      const after = logs('text');
      expect(after.code, after.stderr).toBe(0);
      const lines = (t: string) => t.split('\n').filter((l) => l.trim() !== '');
      for (const l of lines(before.stdout).filter((x) => !x.startsWith('■')))
        expect(after.stdout).toContain(l);
      expect(after.stdout).toContain('  second pass');
      expect(after.stdout).toMatch(/landed on \S+ at [0-9a-f]+/);
      expect(after.stdout.indexOf('landed on')).toBeGreaterThan(after.stdout.indexOf('second pass'));
      expect(lines(after.stdout).length).toBeGreaterThan(lines(before.stdout).length);
    });

    it('ii job logs --follow on another machine gets a running job’s lines through the store’s watch, to its end', async () => {
      const s = fx.scenario('slow', {
        implement: [
          {
            actions: [
              { type: 'message', text: `before the wait ${HOSTILE}` },
              write('b.txt', 'b\n'),
              { type: 'delay', ms: 8000 },
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
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          // Started, its agent talking: the store has its first message.
          await waitFor(
            async () =>
              (
                await c.query("SELECT 1 FROM job_logs WHERE job_id = $1 AND line LIKE '%before the wait%'", [
                  id,
                ])
              ).rowCount,
            'the first message in the store',
            60_000,
          );
        } finally {
          await c.end();
        }
        // Machine B: the job's record (a copy of the database) and none of its files.
        const b = join(fx.tmp.path, 'machine-b');
        mkdirSync(join(b, 'incrementum'), { recursive: true });
        const a = new DatabaseSync(join(fx.env.XDG_STATE_HOME!, 'incrementum', 'state.db'));
        a.exec(`VACUUM INTO '${join(b, 'incrementum', 'state.db')}'`);
        a.close();
        const follow = spawn(process.execPath, [II, 'job', 'logs', id, '--follow'], {
          cwd: fx.repo,
          env: { ...process.env, NO_COLOR: '1', ...fx.env, XDG_STATE_HOME: b },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        follow.stdout.on('data', (d: Buffer) => (out += d.toString()));
        follow.stderr.on('data', (d: Buffer) => (err += d.toString()));
        const closed = new Promise<number | null>((res) => follow.on('close', res));
        // The log so far is printed while the agent waits: what comes next can only come through the follow.
        await waitFor(() => out.includes('before the wait'), 'the log so far', 60_000);
        const c2 = new pg.Client({ connectionString: url });
        await c2.connect();
        try {
          const later = await c2.query(
            "SELECT 1 FROM job_logs WHERE job_id = $1 AND line LIKE '%after the wait%'",
            [id],
          );
          expect(later.rowCount).toBe(0);
        } finally {
          await c2.end();
        }
        const code = await closed;
        expect(code, err).toBe(0);
        expect(await run.exit).toBe(0);
        // The whole log so far, then what came after, to the job's end.
        expect(out).toContain(`before the wait hostile ${SHOWN_CLEAR}`);
        expect(out.indexOf('after the wait')).toBeGreaterThan(out.indexOf('before the wait'));
        expect(out).toContain('review: ACCEPT — good');
        expect(out.trimEnd().split('\n').at(-1)).toBe('■ job completed');
        expectNoControl(out, 'ii job logs --follow from the store');
        // Every fact the runner printed, the follower printed.
        for (const l of run
          .stderr()
          .split('\n')
          .filter((x) => /^\s+(review|project review|tests passed)/.test(x)))
          expect(out).toContain(l.trim());
      } finally {
        run.child.kill('SIGKILL');
      }
    });

    it('Ctrl-C sends the job’s last lines before ii job do exits: its end is in the store', async () => {
      const s = fx.scenario('interrupted', {
        implement: [
          {
            actions: [
              { type: 'message', text: 'working slowly' },
              { type: 'delay', ms: 60_000 },
            ],
          },
        ],
      });
      const run = fx.spawn(['job', 'do', '--title', 'interrupted job'], s);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const id = await waitFor(() => jobIdFrom(run.stderr()) || null, 'the job id', 60_000);
        const has = async (like: string) =>
          (await c.query('SELECT 1 FROM job_logs WHERE job_id = $1 AND line LIKE $2', [id, like])).rowCount;
        await waitFor(() => has('%working slowly%'), 'the agent talking, in the store', 60_000);
        run.child.kill('SIGINT');
        expect(await run.exit).toBe(1);
        // Read once the process is gone: nothing was left for later.
        expect(await has('%"type":"finished"%interrupted (SIGINT)%')).toBe(1);
      } finally {
        run.child.kill('SIGKILL');
        await c.end();
      }
    });
  },
);
