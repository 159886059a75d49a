// ii doctor on a shared PostgreSQL store, through the real CLI against the
// run's private server: a healthy store and remote pass; a wrong password, a
// closed port, a missing database, a schema newer than this build, a config
// file that gives its password away, a missing and an unanswering remote
// each fail with what to do, and no output holds the password.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgStore } from '../../src/state/pg/index.js';
import { ii } from '../helpers/cli.js';
import { dropDatabase, freshDatabase, passwordUrl, pgServer, pgWhyNot, socketUrl } from '../helpers/pg.js';
import { gitRepo, tempDir } from '../helpers/tmp.js';

const server = pgServer();

interface Finding {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

describe.skipIf(!server)(`ii doctor on a shared store${server ? '' : ` (skipped: ${pgWhyNot()})`}`, () => {
  let tmp: ReturnType<typeof tempDir>;
  let repo: string;
  let empty: string;
  let newer: string;
  beforeAll(async () => {
    tmp = tempDir('ii-doctor-pg-');
    const origin = join(tmp.path, 'origin.git');
    const seed = join(tmp.path, 'seed');
    mkdirSync(seed);
    gitRepo(seed);
    execFileSync('git', ['clone', '-q', '--bare', seed, origin]);
    repo = join(tmp.path, 'repo');
    execFileSync('git', ['clone', '-q', origin, repo]);
    writeFileSync(
      join(repo, 'incrementum.toml'),
      '[agent]\npreset = "scripted"\n[job]\ntest-commands = ["true"]\n',
    );
    empty = await freshDatabase(server!);
    newer = await freshDatabase(server!);
    const s = await openPgStore(socketUrl(server!, newer));
    await s.close();
    await bumpSchema(1);
  });
  afterAll(async () => {
    await dropDatabase(server!, empty);
    await dropDatabase(server!, newer);
    tmp.cleanup();
  });

  async function bumpSchema(by: number): Promise<number> {
    const c = new pg.Client({ connectionString: socketUrl(server!, newer) });
    await c.connect();
    try {
      const r = await c.query(
        "UPDATE meta SET value = value + $1 WHERE key = 'schema_version' RETURNING value",
        [by],
      );
      return Number((r.rows[0] as { value: number }).value);
    } finally {
      await c.end();
    }
  }

  const doctor = (url: string, o: { cwd?: string; config?: string } = {}) => {
    const env: NodeJS.ProcessEnv = {
      XDG_STATE_HOME: join(tmp.path, 'state'),
      HOME: join(tmp.path, 'home'),
      XDG_CONFIG_HOME: o.config ?? join(tmp.path, 'no-config'),
      II_DATABASE_URL: url,
    };
    const r = ii(['doctor', '--json'], { cwd: o.cwd ?? repo, env });
    expect(r.stdout + r.stderr).not.toContain(server!.password);
    const all = JSON.parse(r.stdout) as Finding[];
    return {
      code: r.code,
      store: all.find((f) => f.name === 'store'),
      remote: all.find((f) => f.name === 'remote'),
    };
  };

  it('a reachable store and remote: ok, saying the schema, the remote and the repository name', () => {
    const r = doctor(passwordUrl(server!, empty));
    expect(r.store).toMatchObject({ ok: true });
    expect(r.store!.detail).toContain(':[REDACTED]@127.0.0.1');
    expect(r.store!.detail).toContain('an empty database; its schema is made on first use');
    expect(r.remote).toMatchObject({ ok: true });
    expect(r.remote!.detail).toMatch(
      /^origin \(file:.*origin\) answers; this repository is origin-[0-9a-f]{8} in the store/,
    );
  });

  it('a wrong password, a closed port, a missing database: each a failure saying what to check', () => {
    const wrong = doctor(passwordUrl(server!, empty, `not-${server!.password}`));
    expect(wrong.code).toBe(1);
    expect(wrong.store).toMatchObject({ ok: false });
    expect(wrong.store!.detail).toMatch(/password authentication failed/);
    expect(wrong.store!.fix).toMatch(/Check the password/);
    expect(JSON.stringify(wrong)).not.toContain(`not-${server!.password}`);

    const closed = doctor(passwordUrl(server!, empty).replace(`:${server!.port}/`, ':1/'));
    expect(closed.store).toMatchObject({ ok: false });
    expect(closed.store!.detail).toMatch(/ECONNREFUSED/);
    expect(closed.store!.fix).toMatch(/Is the server running/);

    const missing = doctor(passwordUrl(server!, 'no_such_db'));
    expect(missing.store!.detail).toMatch(/database "no_such_db" does not exist/);
    expect(missing.store!.fix).toMatch(/Create the database/);
  });

  it('a schema newer than this build: a failure, and the database left as it was', async () => {
    const before = await bumpSchema(0);
    const r = doctor(socketUrl(server!, newer));
    expect(r.code).toBe(1);
    expect(r.store).toMatchObject({ ok: false });
    expect(r.store!.detail).toContain(
      `schema version ${before}, newer than this build of incrementum knows (${before - 1}); left untouched`,
    );
    expect(r.store!.fix).toMatch(/Upgrade incrementum on this machine/);
    expect(await bumpSchema(0)).toBe(before);
  });

  it('[state] url with a password in a file others can read: refused, saying the chmod', () => {
    const config = join(tmp.path, 'config');
    mkdirSync(join(config, 'incrementum'), { recursive: true });
    const file = join(config, 'incrementum', 'config.toml');
    writeFileSync(file, `[state]\nurl = "${passwordUrl(server!, empty)}"\n`);
    chmodSync(file, 0o644);
    const r = doctor('', { config });
    expect(r.store).toMatchObject({ ok: false });
    expect(r.store!.fix).toContain(`chmod 600 ${file}`);
    chmodSync(file, 0o600);
    const fine = doctor('', { config });
    expect(fine.store).toMatchObject({ ok: true });
    expect(fine.store!.detail).toContain(`from [state] url in ${file}`);
  });

  it('a remote that is not set, and one that does not answer: failures naming the remote', () => {
    const lone = join(tmp.path, 'lone');
    mkdirSync(lone);
    gitRepo(lone);
    const none = doctor(socketUrl(server!, empty), { cwd: lone });
    expect(none.remote).toMatchObject({ ok: false });
    expect(none.remote!.detail).toContain('no remote "origin" in this clone');
    expect(none.remote!.fix).toContain('git remote add origin');

    execFileSync('git', ['remote', 'add', 'origin', 'http://user:tok3n@127.0.0.1:1/team/app.git'], {
      cwd: lone,
    });
    const away = doctor(socketUrl(server!, empty), { cwd: lone });
    expect(away.remote).toMatchObject({ ok: false });
    expect(away.remote!.detail).toMatch(/^origin \(127\.0\.0\.1\/team\/app\) did not answer: /);
    expect(JSON.stringify(away.remote)).not.toContain('tok3n');
    expect(away.remote!.fix).toContain('git ls-remote origin');
  });
});
