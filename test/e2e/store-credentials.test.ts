// The shared store's credentials stay out of what a job starts for its agent:
// a job of `ii job do` on PostgreSQL (II_DATABASE_URL with a password, and
// PGPASSWORD beside it, as a user may export), whose scripted agent prints
// its environment and tries to read the user's incrementum config ([state]
// url, the password in it) and ~/.pgpass from its own shell, and whose test
// command does the same. Neither sees the URL or the password, sandboxed or
// not ([sandbox] mode = "off"); in the sandbox the files read empty. (Outside
// a sandbox a process of the user's can read the user's files: only the
// environment is kept from it there.) The job itself completes in the store.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobFixture, jobIdFrom, verdict } from '../helpers/job.js';
import { dropDatabase, freshDatabase, passwordUrl, pgServer, pgWhyNot } from '../helpers/pg.js';
import { bwrap } from '../helpers/bwrap.js';

const server = pgServer();

describe.skipIf(!server)(
  `the store's credentials and a job's agent${server ? '' : ` (skipped: ${pgWhyNot()})`}`,
  () => {
    let db = '';
    let f: JobFixture | null = null;
    beforeAll(async () => {
      db = await freshDatabase(server!);
    });
    afterAll(async () => {
      if (db) await dropDatabase(server!, db);
    });
    afterEach(() => f?.cleanup());

    /** Runs one job whose agent and test command report what they see; returns a reader of their reports. */
    async function attack(sandbox: 'off' | 'auto') {
      f = new JobFixture(`ii-store-cred-${sandbox}-`);
      const password = server!.password;
      const url = passwordUrl(server!, db);
      const home = f.tmp.path;
      const cfgDir = join(home, 'config', 'incrementum');
      mkdirSync(cfgDir, { recursive: true });
      const cfg = join(cfgDir, 'config.toml');
      writeFileSync(cfg, `# user config\n[state]\nurl = "${url}"\n`);
      chmodSync(cfg, 0o600);
      writeFileSync(join(home, '.pgpass'), `127.0.0.1:*:*:*:${password}\n`, { mode: 0o600 });
      // Results go to the scripted agent's own folder (writable inside the sandbox).
      const dir = join(home, 'agent');
      const R = join(dir, 'results');
      mkdirSync(R, { recursive: true });
      const report = (who: string) =>
        `{ env; echo CONFIG:; cat "${cfg}"; echo PGPASS:; cat "$HOME/.pgpass"; } >"${R}/${who}.out" 2>&1`;
      f.setup([`${report('tests')}; test -f README.md`], {
        // (one machine here: no remote to share the job's refs through)
        job: `\n[sandbox]\nmode = "${sandbox}"\n[remote]\npush = false\n`,
      });
      Object.assign(f.env, { II_DATABASE_URL: url, PGPASSWORD: password, PGPASSFILE: join(home, '.pgpass') });
      const scenario = join(dir, 'scenario.json');
      writeFileSync(
        scenario,
        JSON.stringify({
          implement: [
            {
              actions: [
                { type: 'shell', command: report('agent') },
                { type: 'write', path: 'feature.txt', content: 'x\n' },
              ],
            },
          ],
          review: [verdict('ACCEPT', 'fine')],
        }),
      );
      const r = await f.runAsync(['job', 'do', '--title', `credentials ${sandbox}`], scenario);
      expect(r.code, r.stderr).toBe(0);
      // The job ran on the store the agent could not reach.
      expect(f.show(jobIdFrom(r.stderr)).status).toBe('completed');
      return { out: (who: string) => readFileSync(join(R, `${who}.out`), 'utf8'), password, url, r };
    }

    it('without a sandbox: neither the agent nor the test command gets II_DATABASE_URL or PGPASSWORD', async () => {
      const { out, password } = await attack('off');
      for (const who of ['agent', 'tests']) {
        const env = out(who).split('CONFIG:')[0]!;
        expect(env, who).toContain('PATH='); // it did print its environment
        expect(env, who).not.toMatch(/^(II_DATABASE_URL|PGPASSWORD|PGPASSFILE)=/m);
        expect(env, who).not.toContain(password);
      }
    }, 120_000);

    it.skipIf(!bwrap)(
      'in the sandbox: neither gets them, and the user config and ~/.pgpass read empty',
      async () => {
        const { out, password, r } = await attack('auto');
        expect(r.stderr).not.toContain('not sandboxed');
        for (const who of ['agent', 'tests']) {
          const text = out(who);
          expect(text, who).toContain('PATH=');
          expect(text, who).toContain('CONFIG:');
          expect(text, who).not.toMatch(/^(II_DATABASE_URL|PGPASSWORD|PGPASSFILE)=/m);
          expect(text, who).not.toContain(password);
          expect(text, who).not.toContain('[state]');
        }
      },
      120_000,
    );
  },
);
